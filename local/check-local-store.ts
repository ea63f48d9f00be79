import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { getTableName, is, sql, Table } from 'drizzle-orm';
import * as tables from '../schemas/tables/index.js';
import { DiskBlobStore } from '../runner/blobs/disk-blob-store.js';
import { LocalDatabaseDamagedError } from '../store/db/local-database-damaged-error.js';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import { LocalIndex } from './local-index.js';
import { localStorePaths } from './local-store-paths.js';
import { indexFromJournals, type JournalIndex } from './rebuild-local-index.js';
import { syncLocalJournal } from './sync-local-journal.js';
import { messageOf } from '../core/text/message-of.js';

/** The state of the embedded database: absent until a command reads history; damaged when it does not open or read. */
export interface DatabaseCheck {
  state: 'ok' | 'absent' | 'damaged';
  /** What is wrong, for a damaged one. */
  problem: string | null;
}

/** What `fluksio doctor` found in a local store. */
export interface LocalStoreCheck {
  journal: { runs: number; unfinished: string[]; damaged: string[] };
  database: DatabaseCheck;
  index: {
    cacheEntries: number;
    /** Cache entries the journals hold that the index lacks or holds older: they would miss. */
    behind: number;
    /** Cache entries some of whose blobs are gone: they miss and their stage re-runs. */
    missingBlobs: number;
  };
}

/**
 * Checks a local store (`.fluksio/`): reads every run journal, opens the embedded
 * database, brings it up to date and reads every table through, and compares the index
 * with what the journals say. Returns what it found and the journals' index, which a
 * repair writes.
 */
export async function checkLocalStore(
  stateDir: string,
  options: { templateRoot: string },
): Promise<{ check: LocalStoreCheck; built: JournalIndex }> {
  const paths = localStorePaths(stateDir);
  const built = await indexFromJournals(paths.journalDir);
  const index = new LocalIndex(paths.indexDir);
  const blobs = new DiskBlobStore(paths.blobDir);
  let behind = 0;
  let missingBlobs = 0;
  for (const [key, expected] of built.cache) {
    if ((await index.cacheEntry(key))?.entry.runId !== expected.entry.runId) behind += 1;
    const present = await Promise.all(expected.entry.outs.map((out) => blobs.has(out.digest)));
    if (present.includes(false)) missingBlobs += 1;
  }
  return {
    check: {
      journal: { runs: built.runs, unfinished: built.unfinished, damaged: built.damaged },
      database: await checkLocalDatabase(stateDir, options),
      index: { cacheEntries: built.cache.size, behind, missingBlobs },
    },
    built,
  };
}

/** Opens the database, applies the journals and reads every table through: any failure is damage. */
export async function checkLocalDatabase(
  stateDir: string,
  options: { templateRoot: string },
): Promise<DatabaseCheck> {
  const paths = localStorePaths(stateDir);
  if (!existsSync(join(paths.databaseDir, 'PG_VERSION'))) return { state: 'absent', problem: null };
  let database;
  try {
    database = await openLocalDatabase(paths.databaseDir, {
      waitMs: 120_000,
      templateRoot: options.templateRoot,
    });
  } catch (error) {
    if (error instanceof LocalDatabaseDamagedError) return { state: 'damaged', problem: error.message };
    throw error;
  }
  try {
    await syncLocalJournal(database.db, paths.journalDir);
    for (const table of Object.values(tables)) {
      if (is(table, Table))
        await database.db.execute(sql`select count(*) from ${sql.identifier(getTableName(table))}`);
    }
    return { state: 'ok', problem: null };
  } catch (error) {
    return {
      state: 'damaged',
      problem: `The local database ${paths.databaseDir} does not read back: ${messageOf(error)}`,
    };
  } finally {
    await database.close().catch(() => {});
  }
}
