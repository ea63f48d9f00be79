import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { Logger } from 'pino';
import postgres from 'postgres';
import * as tables from '../schemas/tables/index.js';
import type { Database } from '../store/db/database.js';
import { migrateDatabase } from '../store/db/migrate-database.js';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import { preparingStatements } from '../store/db/preparing-statements.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import { inProcessLock, type KeyedLock } from './keyed-lock.js';
import { postgresAdvisoryLock } from './postgres-advisory-lock.js';

/** The settings that say where the control plane's database is. */
export type DatabaseSettings = Pick<ControlPlaneSettings, 'databaseUrl' | 'dataDir'>;

export interface ControlPlaneDatabase {
  db: Database;
  /** Mutual exclusion by name among every process on this database (keyed-lock.ts). */
  lock: KeyedLock;
  close(): Promise<void>;
}

/** Advisory locks held at once by one process, each on a connection of their own pool. */
const LOCK_CONNECTIONS = 8;

/**
 * Opens the control plane's database and applies pending migrations: PostgreSQL at
 * `databaseUrl`, or without one an embedded PGlite database under `<dataDir>/database`
 * (one node only: PGlite is a single-user Postgres), which start-up says in its log.
 */
export async function openControlPlaneDatabase(
  settings: DatabaseSettings,
  logger: Logger,
): Promise<ControlPlaneDatabase> {
  if (settings.databaseUrl === null) {
    const dataDir = join(settings.dataDir, 'database');
    logger.info({ dataDir }, 'No DATABASE_URL: using an embedded PGlite database (a single node only)');
    const local = await openLocalDatabase(dataDir);
    return { db: local.db, lock: inProcessLock(), close: local.close };
  }
  const client = postgres(settings.databaseUrl, { max: 10, onnotice: () => {} });
  const db: Database = drizzle({ client: preparingStatements(client), schema: tables });
  try {
    await migrateDatabase(db);
  } catch (error) {
    await client.end();
    throw error;
  }
  logger.info({ database: redactedUrl(settings.databaseUrl) }, 'database migrated');
  const lockClient = postgres(settings.databaseUrl, { max: LOCK_CONNECTIONS, onnotice: () => {} });
  return {
    db,
    lock: postgresAdvisoryLock(lockClient),
    close: async () => {
      await lockClient.end();
      await client.end();
    },
  };
}

/** A database URL fit for a log line: no password. */
function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
