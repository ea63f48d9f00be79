import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { SUBMITTING_SUFFIX } from '../sandbox/slurm-submit-script.js';

const run = promisify(execFile);

/** How many times squeue is asked for a marker's job before giving up, and the first wait between. */
const SQUEUE_TRIES = 3;
const SQUEUE_FIRST_WAIT_MS = 500;

/** An attempt's jobs, and the submission markers (`unresolved`) whose job squeue could not be asked for. */
interface AttemptJobs {
  jobs: string[];
  unresolved: string[];
}

/**
 * The Slurm jobs an attempt's job directory (slurm-job-dir.ts) names: one `<stage>.job`
 * file per job submitted and not yet seen to end (the launcher moves the file aside when
 * its job ends), so these are the jobs a launch would re-attach to. A `<stage>.job.submitting`
 * file is the marker of a launch killed after running sbatch and before keeping the job's
 * id: its job is the one squeue lists with that comment, if any (none when squeue fails,
 * asked a few times).
 */
export async function attemptJobs(dir: string): Promise<string[]> {
  return (await listAttemptJobs(dir)).jobs;
}

async function listAttemptJobs(dir: string): Promise<AttemptJobs> {
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
  return { jobs: [...new Set([...jobs, ...(submitted ?? [])])], unresolved: submitted ? [] : markers };
}

/**
 * The ids of the jobs squeue lists with one of `comments`; null when squeue failed each of
 * SQUEUE_TRIES times (slurmctld is often briefly unreachable once restarted).
 */
async function jobsWithComments(comments: readonly string[]): Promise<string[] | null> {
  let listed: { stdout: string } | null;
  for (let tries = 1, waitMs = SQUEUE_FIRST_WAIT_MS; ; tries += 1, waitMs *= 2) {
    listed = await run('squeue', ['--noheader', '--states=all', '--format=%i|%k']).catch(() => null);
    if (listed || tries >= SQUEUE_TRIES) break;
    await sleep(waitMs);
  }
  if (!listed) return null;
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
 * GPUs. Returns the job ids cancelled. When squeue could not say which job a submission
 * marker names, the job may still be queued: the jobs known by id are cancelled, their
 * files removed, and the markers kept (with a warning) for the next start to try again.
 */
export async function cancelAttemptJobs(dir: string, logger: Pick<Logger, 'warn'>): Promise<string[]> {
  const { jobs, unresolved } = await listAttemptJobs(dir);
  // A job Slurm no longer knows is no error: scancel is asked for each of them at once.
  if (jobs.length > 0) await run('scancel', jobs).catch(() => undefined);
  if (unresolved.length === 0) {
    await rm(dir, { recursive: true, force: true });
    return jobs;
  }
  const files = await readdir(dir).catch(() => [] as string[]);
  const kept = files.filter((file) => file.endsWith(`.job${SUBMITTING_SUFFIX}`));
  await Promise.all(
    files
      .filter((file) => !kept.includes(file))
      .map((file) => rm(path.join(dir, file), { recursive: true, force: true })),
  );
  logger.warn(
    { dir, markers: unresolved, cancelled: jobs },
    'squeue failed: a Slurm job queued before its id was kept may still be running; its submission marker is kept for the next start to cancel it',
  );
  return jobs;
}
