import type { CacheEntry } from '../schemas/cache-entry.js';
import type { KeyInputs } from '../schemas/key-inputs.js';
import { manifestKeyOf } from '../core/manifest-key.js';
import { BlobCorruptError, BlobMissingError } from './blobs/blob-errors.js';
import type { ReadSetProbe } from './keys/read-set-probe.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { restoreOut } from './blobs/stage-outputs.js';

/**
 * A stage's cache hit, or null (DESIGN §5): for a traced stage, the newest entry of its
 * manifest key whose every read still has its digest (ccache's direct mode); else the
 * entry of its exact key. A cache that cannot answer is a miss, never a failed run.
 */
export async function findStageHit(
  options: Pick<RunPipelineOptions, 'cache'>,
  { traceable, cacheKey, probe }: { traceable: KeyInputs | null; cacheKey: string; probe: ReadSetProbe },
): Promise<CacheEntry | null> {
  if (traceable) {
    const candidates = await options.cache.candidates(manifestKeyOf(traceable)).catch((): CacheEntry[] => []);
    for (const candidate of candidates) {
      const { readSet } = candidate.keyInputs;
      if (readSet && (await probe.changes(readSet).catch(() => ['unreadable'])).length === 0)
        return candidate;
    }
  }
  return options.cache.lookup(cacheKey).catch(() => null);
}

/**
 * Restores a hit's outs, each verified by digest. Returns null when all came back, or
 * the reason the stage must run instead (a blob gone or corrupt is a miss).
 */
export async function restoreHit(options: RunPipelineOptions, entry: CacheEntry): Promise<string | null> {
  const { workspace, blobs } = options;
  try {
    for (const out of entry.outs) await restoreOut(blobs, workspace.pipelineDir, workspace.repoRoot, out);
    return null;
  } catch (error) {
    if (error instanceof BlobMissingError || error instanceof BlobCorruptError) {
      const what = error instanceof BlobMissingError ? 'is missing' : 'was corrupt';
      return `cached outputs of run ${entry.runId} could not be restored (blob ${error.digest} ${what})`;
    }
    const message = error instanceof Error ? error.message : String(error);
    return `cached outputs of run ${entry.runId} could not be restored: ${message}`;
  }
}
