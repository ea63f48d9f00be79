import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { migrationsFolder } from './migrate-database.js';

/**
 * A short digest of every file under `drizzle/`: names a migrated template (a Postgres
 * database, a PGlite dump) so that a new or edited migration never reuses a stale one.
 */
export async function migrationsDigest(): Promise<string> {
  const folder = migrationsFolder();
  const files = (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(file.slice(folder.length))
      .update('\0')
      .update(await readFile(file));
  return hash.digest('hex').slice(0, 12);
}
