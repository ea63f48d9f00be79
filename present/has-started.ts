import type { StageStatus } from '../schemas/statuses.js';

/** Whether a stage in this status began (so its time means something): not pending, not skipped. */
export function hasStarted(status: StageStatus): boolean {
  return status !== 'pending' && status !== 'skipped';
}
