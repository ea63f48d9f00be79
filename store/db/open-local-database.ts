import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import * as tables from '../../schemas/tables/index.js';
import type { Database } from './database.js';
import { lockDirectory } from './lock-directory.js';
import { LocalDatabaseDamagedError } from './local-database-damaged-error.js';
import { migrateDatabase } from './migrate-database.js';
import { migrationsDigest } from './migrations-digest.js';

/** Written into a data directory once migrated: which migrations it holds. */
const MIGRATED_MARKER = 'fluksio-migrations';

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
  /**
   * A folder where an empty, migrated store is kept for each version of the migrations,
   * so that creating a store is a copy (~1 s here) instead of PGlite's initdb (~5 s).
   * Without it, every new store runs initdb.
   */
  templateRoot?: string;
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
 * opener waits up to `waitMs` and then fails with a sentence saying why. Files that do not
 * start as a database, or do not migrate, raise LocalDatabaseDamagedError.
 */
export async function openLocalDatabase(
  dataDir: string,
  options: OpenLocalDatabaseOptions = {},
): Promise<LocalDatabase> {
  const waitMs = options.waitMs ?? 2000;
  await mkdir(dataDir, { recursive: true });
  const release = await lockDirectory(dataDir, waitMs);
  let digest: string;
  try {
    digest = await migrationsDigest();
    if (options.templateRoot && !existsSync(join(dataDir, 'PG_VERSION'))) {
      await copyTemplate(await ensureTemplate(options.templateRoot, digest), dataDir);
    }
  } catch (error) {
    await release();
    throw error;
  }
  let client: PGlite;
  try {
    client = await PGlite.create(dataDir, { startParams: pgliteStartParams() });
  } catch (error) {
    await release();
    throw new LocalDatabaseDamagedError(dataDir, { cause: error });
  }
  try {
    return await migrated(client, release, { dataDir, digest });
  } catch (error) {
    throw new LocalDatabaseDamagedError(dataDir, { cause: error });
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

/**
 * The template store for this version of the migrations under `root`, made on first use:
 * created and migrated in a temporary folder, closed cleanly, then renamed into place, so
 * a half-made template is never copied.
 */
async function ensureTemplate(root: string, digest: string): Promise<string> {
  const template = join(root, `pglite-${digest}`);
  if (existsSync(join(template, MIGRATED_MARKER))) return template;
  const building = `${template}.tmp-${randomBytes(6).toString('hex')}`;
  await mkdir(building, { recursive: true });
  try {
    const client = await PGlite.create(building, { startParams: pgliteStartParams() });
    const store = await migrated(client, async () => {}, { dataDir: building, digest });
    await store.close();
    await rename(building, template).catch((error: NodeJS.ErrnoException) => {
      // Another process made the same template meanwhile: theirs serves as well.
      if (!existsSync(join(template, MIGRATED_MARKER))) throw error;
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * Copies the template into `dataDir` (made empty by the caller) whole or not at all: into a
 * sibling first, renamed over the empty directory once complete. Copied in place, a copy cut
 * short (a full disk, a second Ctrl-C) left `PG_VERSION` with part of the files, which every
 * later open took for a database and reported damaged.
 */
async function copyTemplate(template: string, dataDir: string): Promise<void> {
  const copying = `${dataDir}.copying-${randomBytes(6).toString('hex')}`;
  try {
    await cp(template, copying, { recursive: true });
    await rename(copying, dataDir);
  } finally {
    await rm(copying, { recursive: true, force: true });
  }
}

async function migrated(
  client: PGlite,
  release: () => Promise<void>,
  onDisk?: { dataDir: string; digest: string },
): Promise<LocalDatabase> {
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
    // A store migrated by these very migrations needs no check (~0.1 s at every open).
    const marker = onDisk ? join(onDisk.dataDir, MIGRATED_MARKER) : null;
    const current = marker ? await readFile(marker, 'utf8').catch(() => null) : null;
    if (!onDisk || current !== onDisk.digest) {
      await migrateDatabase(db);
      if (marker && onDisk) await writeFile(marker, onDisk.digest);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { db, client, close };
}
