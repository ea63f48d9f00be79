import type { Database } from '../../store/db/database.js';
import { createTestPglite } from './pglite-database.js';
import { createTestDatabase } from './postgres-database.js';

/** One database a store test runs against. */
export interface DatabaseBackend {
  name: 'pglite' | 'postgres';
  open(): Promise<{ db: Database; close(): Promise<void> }>;
}

/** The two databases every store function must work on: `describe.each(databaseBackends)`. */
export const databaseBackends: DatabaseBackend[] = [
  { name: 'pglite', open: createTestPglite },
  { name: 'postgres', open: () => createTestDatabase() },
];
