import { emptyStageRecord, type StageRecord } from '../schemas/stage-record.js';
import type { StageStatus } from '../schemas/statuses.js';

/** A record for a stage that never started: skipped after an upstream failure, or cancelled. */
export function notStartedRecord(name: string, status: StageStatus, error: string): StageRecord {
  const now = new Date().toISOString();
  return { ...emptyStageRecord(name, status), startedAt: null, finishedAt: now, error };
}
