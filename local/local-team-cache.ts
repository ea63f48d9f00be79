import type { CacheEntry } from '../schemas/cache-entry.js';
import type { MetricPoint } from '../schemas/metric-point.js';
import type { BlobStore, StageCache } from '../runner/ports.js';

/**
 * The team's cache as a local run reads it (`fluksio run --remote-cache`, issue 13): the
 * engine's second, read-only stage cache (RunPipelineOptions.teamCache), and the series each
 * restored entry's stage streamed in the team's run, recorded as the restoring stage's.
 */
export interface LocalTeamCache {
  cache: StageCache;
  /** Where a hit's outs are restored from: the team's run's blobs, verified, kept in this store. */
  blobsOf(entry: CacheEntry): BlobStore;
  /** The series of the entry of `key`; empty when unknown. Never rejects. */
  pointsOf(key: string): Promise<MetricPoint[]>;
}
