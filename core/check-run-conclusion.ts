import type { RunStatus } from '../schemas/statuses.js';

/** The conclusions a run's check run can end with. */
export type RunConclusion = 'success' | 'failure' | 'cancelled' | 'timed_out';

/**
 * The check-run conclusion of a run's state (the table of DESIGN §6); null while the run
 * is queued or running. A run is left `abandoned` only once its retries are exhausted, so
 * it failed.
 */
export function checkRunConclusion(status: RunStatus): RunConclusion | null {
  switch (status) {
    case 'queued':
    case 'running':
      return null;
    case 'succeeded':
      return 'success';
    case 'cancelled':
      return 'cancelled';
    case 'timed_out':
      return 'timed_out';
    case 'failed':
    case 'abandoned':
      return 'failure';
  }
}
