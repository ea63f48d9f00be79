import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The Slurm jobs an attempt's job directory (slurm-job-dir.ts) names: one `<stage>.job`
 * file per job submitted and not yet seen to end (the launcher moves the file aside when
 * its job ends), so these are the jobs a launch would re-attach to.
 */
export async function attemptJobs(dir: string): Promise<string[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const jobs = await Promise.all(
    files
      .filter((file) => file.endsWith('.job'))
      .map(async (file) => (await readFile(path.join(dir, file), 'utf8').catch(() => '')).trim()),
  );
  return jobs.filter((job) => /^[0-9]+(_[0-9]+)?$/.test(job));
}

/**
 * Cancels (`scancel`) the jobs an attempt's job directory names and removes the
 * directory: nobody follows them any more, and a job left running would only hold its
 * GPUs. Returns the job ids cancelled.
 */
export async function cancelAttemptJobs(dir: string): Promise<string[]> {
  const jobs = await attemptJobs(dir);
  // A job Slurm no longer knows is no error: scancel is asked for each of them at once.
  if (jobs.length > 0) await run('scancel', jobs).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
  return jobs;
}
