import { z } from 'zod';

/** Run states (DESIGN §6). `queued` and `running` are active; the rest are final. */
export const RunStatus = z.enum([
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'timed_out',
  'abandoned',
]);
export type RunStatus = z.infer<typeof RunStatus>;

/** Stage states (DESIGN §6). */
export const StageStatus = z.enum([
  'pending',
  'running',
  'ran',
  'cached',
  'failed',
  'timed_out',
  'skipped',
  'cancelled',
]);
export type StageStatus = z.infer<typeof StageStatus>;

/** True for a run state nothing moves out of. */
export function isFinalRunStatus(status: RunStatus): boolean {
  return status !== 'queued' && status !== 'running';
}

/** A stage that produced its outputs, by running or from the cache. */
export function isStageSuccess(status: StageStatus): boolean {
  return status === 'ran' || status === 'cached';
}
