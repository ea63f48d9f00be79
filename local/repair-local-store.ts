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
  /**
   * Where Ctrl-C (`signal`) stopped it, the store whole either way: `before-changes` (nothing
   * was moved or rebuilt), `database` (the database holds the journals applied so far, the
   * index is as it was: repairing again goes on); null when it went through.
   */
  stopped: 'before-changes' | 'database' | null;
}

export interface RepairLocalStoreOptions {
  templateRoot: string;
  /** Stops at the next point where the store is whole (LocalStoreRepair's `stopped`). */
  signal?: AbortSignal;
  /** Told when another process has the store and the wait for it begins. */
  onWait?: (holder: string) => void;
}

/**
 * Repairs a local store while holding its lock (no run records meanwhile): a damaged
 * database is moved aside — renamed, never deleted — and a new one is built from the run
 * journals; the index is rebuilt from the journals. Blobs are kept as they are. Ctrl-C stops
 * it before anything is moved, or between two journals applied (the index then left as it was).
 */
export async function repairLocalStore(
  stateDir: string,
  options: RepairLocalStoreOptions,
): Promise<LocalStoreRepair> {
  const paths = localStorePaths(stateDir);
  const { signal, onWait } = options;
  const release = await lockDirectory(paths.journalDir, 120_000, {
    ...(signal ? { signal } : {}),
    ...(onWait ? { onWait } : {}),
  });
  try {
    let movedDatabaseTo: string | null = null;
    const databaseCheck = await checkLocalDatabase(stateDir, options);
    if (signal?.aborted)
      return { movedDatabaseTo, runsApplied: 0, cacheEntries: 0, stopped: 'before-changes' };
    if (databaseCheck.state === 'damaged') {
      const aside = `${paths.databaseDir}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await rename(paths.databaseDir, aside);
      movedDatabaseTo = relative(stateDir, aside);
    }
    const database = await openLocalDatabase(paths.databaseDir, {
      waitMs: 120_000,
      templateRoot: options.templateRoot,
    });
    let sync;
    try {
      sync = await syncLocalJournal(database.db, paths.journalDir, signal);
    } finally {
      await database.close();
    }
    if (sync.stopped || signal?.aborted) {
      return { movedDatabaseTo, runsApplied: sync.runsUpdated, cacheEntries: 0, stopped: 'database' };
    }
    const built = await indexFromJournals(paths.journalDir);
    await rebuildLocalIndex(paths.indexDir, built);
    return { movedDatabaseTo, runsApplied: sync.runsUpdated, cacheEntries: built.cache.size, stopped: null };
  } finally {
    await release();
  }
}
