import type { CacheEntry } from '../schemas/cache-entry.js';
import type { KeyInputs } from '../schemas/key-inputs.js';
import { manifestKeyOf } from '../core/manifest-key.js';
import { BlobCorruptError, BlobMissingError, BlobTooLargeError } from './blobs/blob-errors.js';
import type { ReadSetProbe } from './keys/read-set-probe.js';
import type { StageCache } from './ports.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { restoreOut } from './blobs/stage-outputs.js';
import { messageOf } from '../core/text/message-of.js';

/** A cache hit and where it was found. */
export interface StageHit {
  entry: CacheEntry;
  /** Found in the team's cache (RunPipelineOptions.teamCache), after this run's own missed. */
  team: boolean;
}

/** What a stage is looked up by. */
interface StageLookup {
  stage: string;
  traceable: KeyInputs | null;
  cacheKey: string;
  probe: ReadSetProbe;
}

/**
 * A stage's cache hit, or null (DESIGN §5): in the run's own cache, then — only when that
 * misses — in the team's, by the same rule in both (findEntry), so a team's entry is never
 * restored where an entry of this run's own cache with the same inputs would not be. A
 * cache that cannot answer is a miss, never a failed run.
 */
export async function findStageHit(
  options: Pick<RunPipelineOptions, 'cache' | 'teamCache'>,
  lookup: StageLookup,
): Promise<StageHit | null> {
  const own = await findEntry(options.cache, lookup);
  if (own) return { entry: own, team: false };
  const team = options.teamCache ? await findEntry(options.teamCache.cache, lookup) : null;
  return team ? { entry: team, team: true } : null;
}

/**
 * For a traced stage, the newest entry of its manifest key whose every read still has its
 * digest here (ccache's direct mode) and whose listings hide no outs of other stages it
 * does not declare (see ReadSetProbe.undeclaredOutsListed); else the entry of its exact key.
 */
async function findEntry(
  cache: StageCache,
  { stage, traceable, cacheKey, probe }: StageLookup,
): Promise<CacheEntry | null> {
  if (traceable) {
    const candidates = await cache.candidates(manifestKeyOf(traceable)).catch((): CacheEntry[] => []);
    for (const candidate of candidates) {
      const { readSet } = candidate.keyInputs;
      // An entry stored before lookups were traced (a file may have appeared where it looked
      // for one), or before another stage's outs were declared beside what it listed.
      if (!readSet?.lookups || probe.undeclaredOutsListed(readSet, stage).length > 0) continue;
      if ((await probe.changes(readSet).catch(() => ['unreadable'])).length === 0) return candidate;
    }
  }
  return cache.lookup(cacheKey).catch(() => null);
}

/**
 * Restores a hit's outs, each verified by digest (a team's hit from the team's blobs).
 * Returns null when all came back, or the reason the stage must run instead (a blob gone
 * or corrupt is a miss).
 */
export async function restoreHit(
  options: RunPipelineOptions,
  { entry, team }: StageHit,
): Promise<string | null> {
  const { workspace } = options;
  const blobs = team && options.teamCache ? options.teamCache.blobsOf(entry) : options.blobs;
  const whose = team
    ? `the team's cached outputs of run ${entry.runId}`
    : `cached outputs of run ${entry.runId}`;
  try {
    for (const out of entry.outs) await restoreOut(blobs, workspace.pipelineDir, workspace.repoRoot, out);
    return null;
  } catch (error) {
    if (
      error instanceof BlobMissingError ||
      error instanceof BlobCorruptError ||
      error instanceof BlobTooLargeError
    ) {
      const what =
        error instanceof BlobMissingError
          ? 'is missing'
          : error instanceof BlobCorruptError
            ? 'was corrupt'
            : 'was larger than its record';
      return `${whose} could not be restored (blob ${error.digest} ${what})`;
    }
    const message = messageOf(error);
    return `${whose} could not be restored: ${message}`;
  }
}
