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
}

/**
 * `fluksio gc` on a project's `.fluksio/`, holding the store's lock (no run records
 * meanwhile): forgets the finished runs older than `keepDays` — except the newest
 * succeeded run of each pipeline, so there is still a baseline — with their journals and
 * the cache entries they made, then deletes the blob files no remaining run names (as
 * outs or logs), once older than the same cut-off. The journals stay the store's truth:
 * the database drops the same runs and the index is rebuilt from what is left. What runs
 * killed outright left behind (live logs, stages' private folders) goes too. A directory
 * out's manifest that cannot be read (gone, damaged) keeps every blob file.
 */
export async function collectLocalStore(
  stateDir: string,
  options: { keepDays: number; templateRoot: string },
): Promise<LocalCollection> {
  const paths = localStorePaths(stateDir);
  const release = await lockDirectory(paths.journalDir, 120_000);
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
        ? { blobsDeleted: 0, bytesFreed: 0 }
        : await deleteUnreferencedBlobs(paths.blobDir, result.liveDigests, cutoffMs);
    const abandonedFoldersDeleted = await removeAbandonedRunFiles(stateDir, paths.liveDir);
    return {
      abandonedFoldersDeleted,
      runsDeleted: result.runsDeleted,
      cacheEntriesDeleted: cacheBefore - built.cache.size,
      ...sweep,
      runsKept: kept.size,
      unreadableManifests: result.unreadableManifests,
    };
  } finally {
    await release();
  }
}
