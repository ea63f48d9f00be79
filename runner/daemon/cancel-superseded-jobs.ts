import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { slurmJobsRoot } from './slurm-job-dir.js';
import { cancelAttemptJobs } from './slurm-attempt-jobs.js';

/**
 * Cancels (`scancel`) the Slurm jobs a runner submitted for attempts of `runId` other
 * than `attempt`, and forgets them: an attempt is superseded once the control plane gave
 * the run out again (its runner was killed and its lease expired), and its jobs, still
 * queued or running, would only hold GPUs and write into the checkout the new attempt
 * uses. Returns the job ids cancelled.
 */
export async function cancelSupersededJobs(
  workDir: string,
  runId: string,
  attempt: number,
  logger: Pick<Logger, 'warn'>,
): Promise<string[]> {
  const runDir = path.join(slurmJobsRoot(workDir), runId);
  const attempts = await readdir(runDir).catch(() => [] as string[]);
  const cancelled: string[] = [];
  for (const other of attempts.filter((name) => name !== String(attempt))) {
    cancelled.push(...(await cancelAttemptJobs(path.join(runDir, other), logger)));
  }
  return cancelled;
}
