import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { lock } from 'proper-lockfile';
import * as tables from '../schemas/tables/index.js';
import type { Database } from './database.js';
import { migrateDatabase } from './migrate-database.js';

/** An embedded database and the way to shut it down. */
export interface LocalDatabase {
  db: Database;
  /** The PGlite instance underneath, for what drizzle does not cover (dumps). */
  client: PGlite;
  /** Closes the database (flushing it to disk) and releases the data directory. Idempotent. */
  close(): Promise<void>;
}

export interface OpenLocalDatabaseOptions {
  /**
   * How long to wait for another process to release the data directory before failing.
   * @defaultValue 2000
   */
  waitMs?: number;
}

/**
 * PGlite's own start parameters with a 2 MB buffer pool: the default 128 MB costs
 * ~450 ms at every open (measured), and an embedded store of runs never needs it.
 */
export function pgliteStartParams(): string[] {
  return [...PGlite.defaultStartParams, '-c', 'shared_buffers=2MB'];
}

/**
 * Opens (creating it on first use) the embedded store under `dataDir` and migrates it.
 * A data directory is locked for the life of the handle: PGlite is a single-user
 * Postgres, and two processes writing one directory lose writes (observed), so a second
 * opener waits up to `waitMs` and then fails with a sentence saying why.
 */
export async function openLocalDatabase(
  dataDir: string,
  options: OpenLocalDatabaseOptions = {},
): Promise<LocalDatabase> {
  const waitMs = options.waitMs ?? 2000;
  await mkdir(dataDir, { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await lock(dataDir, {
      realpath: false,
      // PGlite runs queries synchronously on this thread; a generous staleness keeps a long
      // query from making a live lock look abandoned.
      stale: 30_000,
      update: 5_000,
      retries: { retries: Math.max(0, Math.ceil(waitMs / 200)), minTimeout: 200, maxTimeout: 200, factor: 1 },
      // Compromised means another process judged us dead and took the directory; there is
      // nothing sound left to do from a timer callback, and throwing there would crash.
      onCompromised: () => {},
    });
  } catch (error) {
    throw new Error(
      `The local store ${dataDir} is in use by another fluksio process; wait for it to finish and try again`,
      { cause: error },
    );
  }
  try {
    const client = await PGlite.create(dataDir, { startParams: pgliteStartParams() });
    return await migrated(client, release);
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * An embedded database that lives in memory, migrated: for tests. `loadDataDir` starts it
 * from a `dumpDataDir()` tarball instead of running initdb (~1 s instead of ~4 s).
 */
export async function openMemoryDatabase(options: { loadDataDir?: Blob } = {}): Promise<LocalDatabase> {
  const client = await PGlite.create({ startParams: pgliteStartParams(), loadDataDir: options.loadDataDir });
  return migrated(client, async () => {});
}

async function migrated(client: PGlite, release: () => Promise<void>): Promise<LocalDatabase> {
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      await client.close();
    } finally {
      await release();
    }
  };
  const db = drizzle({ client, schema: tables });
  try {
    await migrateDatabase(db);
  } catch (error) {
    await close();
    throw error;
  }
  return { db, client, close };
}
