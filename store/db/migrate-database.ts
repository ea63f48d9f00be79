import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Database, Tables } from './database.js';

/**
 * The `drizzle/` folder of the fluksio package: the nearest one above this module that
 * holds drizzle-kit's journal, so it is the same folder whether this module runs from the
 * source tree (vitest, tsx) or compiled under `build/store/db/` (where tsc also writes a
 * copy of package.json, so the package root cannot be told by that file).
 */
export function migrationsFolder(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'drizzle', 'meta', '_journal.json'))) return join(dir, 'drizzle');
    if (dirname(dir) === dir)
      throw new Error(`No drizzle/meta/_journal.json above ${start}: cannot find fluksio's migrations`);
  }
}

/**
 * Applies the migrations under `drizzle/` that the database has not seen, in one
 * transaction, recording them in `drizzle.__drizzle_migrations` as drizzle-kit does.
 * Not safe to run from two processes at once on one server database: run it once
 * (`fluksio migrate`) before starting replicas.
 */
export async function migrateDatabase(db: Database): Promise<void> {
  // drizzle ships one migrator per driver; each is the same two lines over the dialect
  // and session that every PgDatabase has, so this one serves PGlite handles as well.
  await migrate(db as unknown as PostgresJsDatabase<Tables>, { migrationsFolder: migrationsFolder() });
}
