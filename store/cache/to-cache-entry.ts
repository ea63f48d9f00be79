import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { CacheEntryRow } from '../../schemas/tables/cache-entries.js';

/** A cache row as the CacheEntry of the runner protocol (scope columns dropped, time as ISO). */
export function toCacheEntry(row: CacheEntryRow): CacheEntry {
  return {
    key: row.key,
    stage: row.stage,
    runId: row.runId,
    outs: row.outs,
    metrics: row.metrics,
    keyInputs: row.keyInputs,
    createdAt: row.createdAt.toISOString(),
  };
}
