import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Database } from '../store/db/database.js';
import type { BlobByteCounters } from './blobs/blob-byte-counters.js';
import type { BlobStorage } from './blobs/blob-storage.js';
import type { CancelWatches } from './cancel-watches.js';
import type { ClaimHandoff } from './claim-handoff.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import type { Run } from '../schemas/tables/runs.js';
import type { RunBell } from './run-bell.js';
import type { RunDoorbell } from './run-doorbell.js';

/**
 * How a claimed run's git fetch is authorised (DESIGN §6): a credential minted at claim
 * time for that run's repository, revoked once the runner fetched.
 */
export interface GitCredentials {
  /** The `http.extraHeader` the run's fetch uses, or null when it needs none. */
  forRun(run: Run): Promise<string | null>;
  /** Revokes a credential forRun made, passed back by the runner; false for one it did not make. */
  revoke(extraHeader: string): Promise<boolean>;
}

/** What every route of the control plane's HTTP API works with. */
export interface RouteContext {
  db: Database;
  redis: Redis;
  settings: ControlPlaneSettings;
  blobs: BlobStorage;
  /** The blob bytes that pass through this process. */
  blobBytes: BlobByteCounters;
  /** The process's Prometheus metrics, scraped at `GET /metrics`. */
  metrics: Registry;
  doorbell: RunDoorbell;
  /** The claims parked in this process, offered to the runs queued here. */
  handoff: ClaimHandoff;
  /** Rung when a run's runner sent events, so its open pages show them at once. */
  runBell: RunBell;
  /** The runners' watches for their run's stop, parked in this process. */
  cancelWatches: CancelWatches;
  /** Aborted when the server begins to close, so waiting claims and watches answer at once. */
  closing: AbortSignal;
  /** Git credentials for claimed runs of GitHub repositories; absent without the GitHub App. */
  gitCredentials?: GitCredentials;
  /**
   * Called with a run's id whenever a route changed its state (claimed, started, a stage
   * finished, finished, released, cancelled), so its check run follows; never throws.
   */
  onRunChanged?: (runId: string) => void;
}
