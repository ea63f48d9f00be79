import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as tables from '../../schemas/tables/index.js';

/** Every table of fluksio's database, as drizzle sees them. Pass as `schema` when making a handle. */
export type Tables = typeof tables;

/**
 * A drizzle handle over fluksio's tables, whatever the driver: `drizzle-orm/pglite` locally,
 * `drizzle-orm/postgres-js` on a server, or a transaction of either. Handles must be made
 * with `{ schema: tables }` (from schemas/tables/index.js) to be assignable.
 */
export type Database = PgDatabase<PgQueryResultHKT, Tables>;
