import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DiskBlobStore } from '../../runner/disk-blob-store.js';
import type { StageCache } from '../../runner/ports.js';
import type { Database } from '../../store/database.js';
import { findCacheCandidates } from '../../store/find-cache-candidates.js';
import { findCacheEntry } from '../../store/find-cache-entry.js';
import { latestCacheEntry } from '../../store/latest-cache-entry.js';
import { openLocalDatabase } from '../../store/open-local-database.js';

/** Local runs are one repository and one trust domain (DESIGN §1: local runs are trusted). */
export const LOCAL_REPOSITORY = 'local';
const LOCAL_DOMAINS = ['trusted'];

/** The embedded store and blob store under a pipeline's `.fluksio/`. */
export interface LocalState {
  db: Database;
  blobs: DiskBlobStore;
  cache: StageCache;
  close(): Promise<void>;
}

export interface LocalStateOptions {
  /** How long to wait for another fluksio process using the same store. @defaultValue 120000 */
  waitMs?: number;
  /** The user's cache folder for fluksio, where the empty-store template is kept. */
  cacheDir?: string;
}

/**
 * Opens `.fluksio/` beside the pipeline: the PGlite database (created on first use) and
 * the blob store. The folder ignores itself (`.fluksio/.gitignore` holding `*`), so it
 * never shows up in `git status` and never counts as code.
 */
export async function openLocalState(stateDir: string, options: LocalStateOptions = {}): Promise<LocalState> {
  await mkdir(stateDir, { recursive: true });
  await writeFile(join(stateDir, '.gitignore'), '# fluksio local state: runs, cache and blobs\n*\n');
  const { db, close } = await openLocalDatabase(join(stateDir, 'db'), {
    waitMs: options.waitMs ?? 120_000,
    ...(options.cacheDir ? { templateRoot: options.cacheDir } : {}),
  });
  const blobs = new DiskBlobStore(join(stateDir, 'blobs'));
  return { db, blobs, cache: localStageCache(db), close };
}

/** The embedded store as the engine's stage cache; a store that cannot answer is a miss. */
function localStageCache(db: Database): StageCache {
  const scope = { db, repository: LOCAL_REPOSITORY, trustDomains: LOCAL_DOMAINS };
  return {
    lookup: (key) => findCacheEntry({ ...scope, key }).catch(() => null),
    candidates: (manifestKey) => findCacheCandidates({ ...scope, manifestKey }).catch(() => []),
    latest: (stage) => latestCacheEntry({ ...scope, stage }).catch(() => null),
  };
}
