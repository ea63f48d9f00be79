import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { PreviousStage } from '../../schemas/previous-stage.js';
import type { StageCache } from '../ports.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';

export interface RemoteStageCacheOptions {
  client: ControlPlaneClient;
  /** The run whose lease the lookups carry: the control plane scopes them to its repository and trust domain. */
  run: RunLease;
  /** Told when a lookup fails (it is then a miss). */
  onError?(error: unknown): void;
  signal?: AbortSignal;
}

/**
 * The stage cache over `GET /api/v1/runs/:id/cache/:key`, for traced stages
 * `GET /api/v1/runs/:id/cache-candidates/:manifestKey` and, to say why a stage re-ran,
 * `GET /api/v1/runs/:id/cache?stage=NAME` (the stage in the previous run of the pipeline, DESIGN §5). A cache that cannot answer —
 * unreachable, refusing, answering nonsense — is a miss, never a failed run.
 */
export class RemoteStageCache implements StageCache {
  constructor(private readonly options: RemoteStageCacheOptions) {}

  async lookup(key: string): Promise<CacheEntry | null> {
    const { client, run, signal } = this.options;
    try {
      // One retry at most: a stage waits on this, and a miss only costs running it.
      return await client.cacheEntry(run, key, { retries: 1, ...(signal ? { signal } : {}) });
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
  }

  async candidates(manifestKey: string): Promise<CacheEntry[]> {
    const { client, run, signal } = this.options;
    try {
      return await client.cacheCandidates(run, manifestKey, { retries: 1, ...(signal ? { signal } : {}) });
    } catch (error) {
      this.options.onError?.(error);
      return [];
    }
  }

  async previous(stage: string): Promise<PreviousStage | null> {
    const { client, run, signal } = this.options;
    try {
      return await client.previousStage(run, stage, { retries: 1, ...(signal ? { signal } : {}) });
    } catch (error) {
      this.options.onError?.(error);
      return null;
    }
  }
}
