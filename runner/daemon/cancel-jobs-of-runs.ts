import { readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { slurmJobsRoot } from './slurm-job-dir.js';
import { cancelAttemptJobs } from './slurm-attempt-jobs.js';

/**
 * Cancels (`scancel`) the Slurm jobs of every attempt of the runs `which` picks among
 * those with jobs kept in the work directory, and forgets them: at start-up, the runs a
 * restarted runner does not resume (the control plane refused, or nothing recorded
 * them), whose jobs nobody would ever follow or cancel otherwise. Returns the job ids
 * cancelled.
 */
export async function cancelJobsOfRuns(
  workDir: string,
  which: (runId: string) => boolean,
  logger: Pick<Logger, 'warn'>,
): Promise<string[]> {
  const root = slurmJobsRoot(workDir);
  const runs = await readdir(root).catch(() => [] as string[]);
  const cancelled: string[] = [];
  for (const runId of runs.filter(which)) {
    const runDir = path.join(root, runId);
    for (const attempt of await readdir(runDir).catch(() => [] as string[])) {
      cancelled.push(...(await cancelAttemptJobs(path.join(runDir, attempt), logger)));
    }
    await rmdir(runDir).catch(() => undefined);
  }
  return cancelled;
}
