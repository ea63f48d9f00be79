import type { JobPending } from '../../schemas/job-pending.js';

/**
 * `pending: Resources (Slurm job 123)`: why a stage's job waits in the queue, as its
 * check run, `fluksio show` and its page say it. The stage's log says it in the same
 * words, written by the Slurm attach process.
 */
export function describeJobPending({ job, reason }: JobPending): string {
  return `pending: ${reason} (Slurm job ${job})`;
}
