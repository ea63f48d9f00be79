import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskBlobStore } from '../runner/blobs/disk-blob-store.js';
import { ignoreStateDir } from '../runner/ignore-state-dir.js';
import type { StageCache } from '../runner/ports.js';
import { lockDirectory } from '../store/db/lock-directory.js';
import { LocalIndex } from './local-index.js';
import { localStorePaths } from './local-store-paths.js';

/** Local runs are one repository and one trust domain (DESIGN §1: local runs are trusted). */
export const LOCAL_REPOSITORY = 'local';

/** What `fluksio run` records into under `.fluksio/`, held by this process until closed. */
export interface LocalState {
  /** One `<run>.jsonl` per run: the record every other part is derived from. */
  journalDir: string;
  /** What running runs' stages printed so far (LiveStageLogs), for `fluksio ui`. */
  liveDir: string;
  index: LocalIndex;
  blobs: DiskBlobStore;
  /** The stage cache as one run sees it: "why it re-ran" compares with the run before it. */
  cacheFor(run: { id: string; pipelinePath: string }): StageCache;
  /** Releases the store for the next `fluksio run`. Idempotent. */
  close(): Promise<void>;
}

export interface LocalStateOptions {
  /** How long to wait for another `fluksio run` using the same store. @defaultValue 120000 */
  waitMs?: number;
  /** Told when another process has the store and the wait for it begins (lockDirectory's `onWait`). */
  onWait?: (holder: string) => void;
  /** Gives up waiting for another process's store when aborted (lockDirectory's `signal`). */
  signal?: AbortSignal;
}

/**
 * Opens `.fluksio/` beside the pipeline for recording runs: the journal, the index and
 * the blob store — not the embedded database, which the commands that read history bring
 * up to date from the journal. One process records at a time: a second waits up to
 * `waitMs` for the first, so two runs never interleave their index writes. A store
 * recorded before fluksio kept journals is adopted first (adoptDatabaseRuns), and a missing
 * index is rebuilt from the journals. The folder
 * ignores itself (`.fluksio/.gitignore` holding `*`), so it never shows up in `git status`.
 */
export async function openLocalState(stateDir: string, options: LocalStateOptions = {}): Promise<LocalState> {
  const paths = localStorePaths(stateDir);
  if (!existsSync(paths.journalDir) && existsSync(join(paths.databaseDir, 'PG_VERSION'))) {
    // Loaded only here: a store with journals never brings the database up on this path.
    await (await import('./adopt-database-runs.js')).adoptDatabaseRuns(stateDir);
  }
  await mkdir(paths.journalDir, { recursive: true });
  await ignoreStateDir(stateDir);
  const release = await lockDirectory(paths.journalDir, options.waitMs ?? 120_000, {
    ...(options.onWait ? { onWait: options.onWait } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!existsSync(paths.indexDir)) {
    // The index is derived from the journals: a store without one (deleted, or carried
    // without it) gets it back before the run, instead of missing every cached stage.
    const { indexFromJournals, rebuildLocalIndex } = await import('./rebuild-local-index.js');
    await rebuildLocalIndex(paths.indexDir, await indexFromJournals(paths.journalDir)).catch(
      async (error: unknown) => {
        await release();
        throw error;
      },
    );
  }
  const index = new LocalIndex(paths.indexDir);
  let closed = false;
  return {
    journalDir: paths.journalDir,
    liveDir: paths.liveDir,
    index,
    blobs: new DiskBlobStore(paths.blobDir),
    cacheFor: (run) => indexStageCache(index, run.pipelinePath),
    close: async () => {
      if (closed) return;
      closed = true;
      await release();
    },
  };
}

/**
 * The index as the engine's stage cache for runs of one pipeline; an index that cannot
 * answer is a miss. "Why it re-ran" compares with the stage's record in the previous run of
 * the pipeline (recorded when it finished, so a run never compares with itself).
 */
export function indexStageCache(index: LocalIndex, pipelinePath: string): StageCache {
  return {
    lookup: async (key) => (await index.cacheEntry(key).catch(() => null))?.entry ?? null,
    candidates: (manifestKey) => index.candidates(manifestKey).catch(() => []),
    previous: (stage) => index.previousStage(pipelinePath, stage).catch(() => null),
  };
}
