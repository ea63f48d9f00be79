import type { Redis } from 'ioredis';
import type { Database } from '../store/database.js';
import type { BlobStorage } from './blob-storage.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import type { RunDoorbell } from './run-doorbell.js';

/** What every route of the control plane's HTTP API works with. */
export interface RouteContext {
  db: Database;
  redis: Redis;
  settings: ControlPlaneSettings;
  blobs: BlobStorage;
  doorbell: RunDoorbell;
  /** Aborted when the server begins to close, so waiting claims answer at once. */
  closing: AbortSignal;
}
