import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { SUBMITTING_SUFFIX } from '../sandbox/slurm-submit-script.js';

const run = promisify(execFile);

/**
 * The Slurm jobs an attempt's job directory (slurm-job-dir.ts) names: one `<stage>.job`
 * file per job submitted and not yet seen to end (the launcher moves the file aside when
 * its job ends), so these are the jobs a launch would re-attach to. A `<stage>.job.submitting`
 * file is the marker of a launch killed after running sbatch and before keeping the job's
 * id: its job is the one squeue lists with that comment, if any (none when squeue fails).
 */
export async function attemptJobs(dir: string): Promise<string[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const read = (suffix: string) =>
    Promise.all(
      files
        .filter((file) => file.endsWith(suffix))
        .map(async (file) => (await readFile(path.join(dir, file), 'utf8').catch(() => '')).trim()),
    );
  const jobs = (await read('.job')).filter((job) => /^[0-9]+(_[0-9]+)?$/.test(job));
  const markers = (await read(`.job${SUBMITTING_SUFFIX}`)).filter((marker) => marker !== '');
  const submitted = markers.length === 0 ? [] : await jobsWithComments(markers);
  return [...new Set([...jobs, ...submitted])];
}

/** The ids of the jobs squeue lists with one of `comments`; none when squeue fails. */
async function jobsWithComments(comments: readonly string[]): Promise<string[]> {
  const listed = await run('squeue', ['--noheader', '--states=all', '--format=%i|%k']).catch(() => null);
  if (!listed) return [];
  const wanted = new Set(comments);
  return listed.stdout
    .split('\n')
    .map((line) => [line.slice(0, line.indexOf('|')), line.slice(line.indexOf('|') + 1)] as const)
    .filter(([job, comment]) => job !== '' && wanted.has(comment))
    .map(([job]) => job);
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
