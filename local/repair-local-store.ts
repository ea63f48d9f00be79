import { rename } from 'node:fs/promises';
import { relative } from 'node:path';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import { checkLocalDatabase } from './check-local-store.js';
import { lockDirectory } from '../store/db/lock-directory.js';
import { localStorePaths } from './local-store-paths.js';
import { indexFromJournals, rebuildLocalIndex } from './rebuild-local-index.js';
import { syncLocalJournal } from './sync-local-journal.js';

/** What `fluksio doctor --repair` did. */
export interface LocalStoreRepair {
  /** Where the damaged database was moved (relative to the store), or null when it was sound. */
  movedDatabaseTo: string | null;
  /** Runs the database was (re)built from. */
  runsApplied: number;
  /** Cache entries the rebuilt index holds. */
  cacheEntries: number;
}

/**
 * Repairs a local store while holding its lock (no run records meanwhile): a damaged
 * database is moved aside — renamed, never deleted — and a new one is built from the run
 * journals; the index is rebuilt from the journals. Blobs are kept as they are.
 */
export async function repairLocalStore(
  stateDir: string,
  options: { templateRoot: string },
): Promise<LocalStoreRepair> {
  const paths = localStorePaths(stateDir);
  const release = await lockDirectory(paths.journalDir, 120_000);
  try {
    let movedDatabaseTo: string | null = null;
    if ((await checkLocalDatabase(stateDir, options)).state === 'damaged') {
      const aside = `${paths.databaseDir}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await rename(paths.databaseDir, aside);
      movedDatabaseTo = relative(stateDir, aside);
    }
    const database = await openLocalDatabase(paths.databaseDir, {
      waitMs: 120_000,
      templateRoot: options.templateRoot,
    });
    let runsApplied: number;
    try {
      runsApplied = (await syncLocalJournal(database.db, paths.journalDir)).runsUpdated;
    } finally {
      await database.close();
    }
    const built = await indexFromJournals(paths.journalDir);
    await rebuildLocalIndex(paths.indexDir, built);
    return { movedDatabaseTo, runsApplied, cacheEntries: built.cache.size };
  } finally {
    await release();
  }
}
