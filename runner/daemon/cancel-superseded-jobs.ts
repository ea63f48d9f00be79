import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { slurmJobsRoot } from './slurm-job-dir.js';

const run = promisify(execFile);

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
): Promise<string[]> {
  const runDir = path.join(slurmJobsRoot(workDir), runId);
  const attempts = await readdir(runDir).catch(() => [] as string[]);
  const cancelled: string[] = [];
  for (const other of attempts.filter((name) => name !== String(attempt))) {
    const dir = path.join(runDir, other);
    const files = await readdir(dir).catch(() => [] as string[]);
    const jobs = await Promise.all(
      files
        .filter((file) => file.endsWith('.job'))
        .map(async (file) => (await readFile(path.join(dir, file), 'utf8').catch(() => '')).trim()),
    );
    const live = jobs.filter((job) => /^[0-9]+(_[0-9]+)?$/.test(job));
    // A job Slurm no longer knows is no error: scancel is asked for each of them at once.
    if (live.length > 0) await run('scancel', live).catch(() => undefined);
    cancelled.push(...live);
    await rm(dir, { recursive: true, force: true });
  }
  return cancelled;
}
