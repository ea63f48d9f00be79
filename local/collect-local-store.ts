import { rm } from 'node:fs/promises';
import { runs } from '../schemas/tables/runs.js';
import type { BlobDigest } from '../schemas/blob-digest.js';
import { BlobCorruptError, BlobMissingError } from '../runner/blobs/blob-errors.js';
import { DiskBlobStore } from '../runner/blobs/disk-blob-store.js';
import { gcStore, type UnreadableManifest } from '../store/blobs/gc-store.js';
import { manifestFiles } from '../store/blobs/manifest-files.js';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import { deleteUnreferencedBlobs } from './delete-unreferenced-blobs.js';
import { lockDirectory } from '../store/db/lock-directory.js';
import { localStorePaths } from './local-store-paths.js';
import { removeAbandonedRunFiles } from './remove-abandoned-run-files.js';
import { indexFromJournals, rebuildLocalIndex } from './rebuild-local-index.js';
import { journalFileOf } from './run-journal.js';
import { syncLocalJournal } from './sync-local-journal.js';

/** What collecting a local store removed. */
export interface LocalCollection {
  runsDeleted: number;
  cacheEntriesDeleted: number;
  blobsDeleted: number;
  bytesFreed: number;
  /** Runs left in the store. */
  runsKept: number;
  /** Folders removed that runs which never ended left behind (live logs, stages' private folders). */
  abandonedFoldersDeleted: number;
  /** Directory manifests that could not be read: while there are any, no blob file is deleted (gc-store.ts). */
  unreadableManifests: UnreadableManifest[];
  /**
   * Where Ctrl-C (`signal`) stopped it, the store whole either way: `before-changes` (nothing
   * was removed), `blob-sweep` (runs and cache entries went, some unreferenced blob files and
   * abandoned folders stay for the next gc); null when it went through.
   */
  stopped: 'before-changes' | 'blob-sweep' | null;
}

export interface CollectLocalStoreOptions {
  keepDays: number;
  templateRoot: string;
  /** Stops at the next point where the store is whole (LocalCollection's `stopped`). */
  signal?: AbortSignal;
  /** Told when another process has the store and the wait for it begins. */
  onWait?: (holder: string) => void;
}

const NOTHING_COLLECTED = {
  runsDeleted: 0,
  cacheEntriesDeleted: 0,
  blobsDeleted: 0,
  bytesFreed: 0,
  abandonedFoldersDeleted: 0,
  unreadableManifests: [],
};

/**
 * `fluksio gc` on a project's `.fluksio/`, holding the store's lock (no run records
 * meanwhile): forgets the finished runs older than `keepDays` — except the newest
 * succeeded run of each pipeline, so there is still a baseline — with their journals and
 * the cache entries they made, then deletes the blob files no remaining run names (as
 * outs or logs), once older than the same cut-off. The journals stay the store's truth:
 * the database drops the same runs and the index is rebuilt from what is left. What runs
 * killed outright left behind (live logs, stages' private folders) goes too. A directory
 * out's manifest that cannot be read (gone, damaged) keeps every blob file. Ctrl-C stops it
 * before it forgets a run, or between two blob files once the index matches the journals.
 */
export async function collectLocalStore(
  stateDir: string,
  options: CollectLocalStoreOptions,
): Promise<LocalCollection> {
  const paths = localStorePaths(stateDir);
  const { signal, onWait } = options;
  const release = await lockDirectory(paths.journalDir, 120_000, {
    ...(signal ? { signal } : {}),
    ...(onWait ? { onWait } : {}),
  });
  try {
    const cacheBefore = (await indexFromJournals(paths.journalDir)).cache.size;
    const database = await openLocalDatabase(paths.databaseDir, {
      waitMs: 120_000,
      templateRoot: options.templateRoot,
    });
    let result;
    let kept: Set<string>;
    let cutoffMs: number;
    const blobs = new DiskBlobStore(paths.blobDir);
    try {
      await syncLocalJournal(database.db, paths.journalDir);
      const before = await database.db.select({ id: runs.id }).from(runs);
      if (signal?.aborted)
        return { ...NOTHING_COLLECTED, runsKept: before.length, stopped: 'before-changes' };
      // Before gc reads the database, as `fluksio gc --server` takes it (gc-command.ts).
      cutoffMs = Date.now() - options.keepDays * 86_400_000;
      result = await gcStore({
        db: database.db,
        keepDays: options.keepDays,
        readManifest: async (digest) => {
          // A manifest gone or damaged names no file gc can see: gc keeps every blob file.
          // Any other failure to read it (EMFILE, EACCES) stops gc altogether.
          try {
            return manifestFiles(await blobs.getBytes(digest as BlobDigest));
          } catch (error) {
            if (error instanceof BlobMissingError) return { unreadable: `missing from ${paths.blobDir}` };
            if (error instanceof BlobCorruptError) return { unreadable: `damaged: ${error.message}` };
            throw error;
          }
        },
      });
      kept = new Set((await database.db.select({ id: runs.id }).from(runs)).map((row) => row.id));
      for (const { id } of before)
        if (!kept.has(id)) await rm(journalFileOf(paths.journalDir, id), { force: true });
    } finally {
      await database.close();
    }
    const built = await indexFromJournals(paths.journalDir);
    await rebuildLocalIndex(paths.indexDir, built);
    const sweep =
      result.unreadableManifests.length > 0
        ? { blobsDeleted: 0, bytesFreed: 0, stopped: false }
        : await deleteUnreferencedBlobs(paths.blobDir, result.liveDigests, cutoffMs, { signal });
    const stopped = signal?.aborted ? 'blob-sweep' : null;
    const abandonedFoldersDeleted = stopped ? 0 : await removeAbandonedRunFiles(stateDir, paths.liveDir);
    return {
      abandonedFoldersDeleted,
      runsDeleted: result.runsDeleted,
      cacheEntriesDeleted: cacheBefore - built.cache.size,
      blobsDeleted: sweep.blobsDeleted,
      bytesFreed: sweep.bytesFreed,
      runsKept: kept.size,
      unreadableManifests: result.unreadableManifests,
      stopped,
    };
  } finally {
    await release();
  }
}
