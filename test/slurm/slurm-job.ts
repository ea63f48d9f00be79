import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { isFinalSlurmRecord } from '../../runner/sandbox/slurm-exit-causes.js';
import { jobFieldsOf } from '../../runner/sandbox/slurm-usage.js';

const run = promisify(execFile);

/** `scontrol show job -o ID` as a field → value map (finished jobs stay known for MinJobAge). */
export async function jobFields(id: string): Promise<Record<string, string>> {
  const { stdout } = await run('scontrol', ['show', 'job', '-o', id]);
  return jobFieldsOf(stdout);
}

/**
 * The job's record in the cluster's accounting (`sacct -X`), as a field → value map with
 * `State`, `End` and each of `fields`, once final (isFinalSlurmRecord) and each of
 * `fields` filled in. slurmctld sends a job's records to slurmdbd after the fact and one
 * after another (its end may arrive before its request's ReqTRES, Timelimit and
 * Partition), so it is asked until then.
 */
export async function accountedJob(
  id: string,
  fields: readonly string[],
  timeoutMs = 120_000,
): Promise<Record<string, string>> {
  const names = ['State', 'End', ...fields];
  let record: Record<string, string> = {};
  let seen = '';
  await waitFor(
    `the accounting's final record of job ${id}`,
    async () => {
      // sacct fails while slurmdbd restarts: ask again.
      const stdout = await run('sacct', ['-n', '-P', '-X', '-j', id, '-o', names.join(',')]).then(
        (done) => done.stdout,
        (error: { stderr?: string }) => {
          seen = `sacct failed: ${error.stderr?.trim() ?? ''}`;
          return null;
        },
      );
      if (stdout === null) return false;
      const values = stdout.split('\n')[0]?.split('|') ?? [];
      record = Object.fromEntries(names.map((name, at) => [name, values[at] ?? '']));
      seen = JSON.stringify(record);
      return (
        isFinalSlurmRecord(record.State ?? '', record.End ?? '') &&
        fields.every((name) => record[name] !== '')
      );
    },
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (last seen: ${seen})`);
  });
  return record;
}

/** Submits `sbatch --parsable --output=/dev/null FLAGS --wrap=CMD`; the job's id. */
export async function submitJob(cmd: string, flags: readonly string[] = []): Promise<string> {
  const { stdout } = await run('sbatch', ['--parsable', '--output=/dev/null', ...flags, `--wrap=${cmd}`]);
  return stdout.trim().split(';')[0] ?? '';
}

/** Whether `squeue` still lists the job as pending, running or completing. */
export async function inQueue(id: string): Promise<boolean> {
  const { stdout } = await run('squeue', ['-h', '-j', id, '-t', 'PD,R,CG,CF,S', '-o', '%i']).catch(() => ({
    stdout: '',
  }));
  return stdout.trim() !== '';
}

/** Polls until `check` holds, failing with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

/** The first line of a file, or '' while it does not exist yet. */
export async function firstLine(file: string): Promise<string> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n')[0]?.trim() ?? '';
}

/** Starts the single-node Slurm when it is not running (scripts/start-slurm.sh is idempotent). */
export async function startSlurm(): Promise<void> {
  await run('bash', ['scripts/start-slurm.sh']);
}
