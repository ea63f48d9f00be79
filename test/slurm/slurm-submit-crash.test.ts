import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { cancelAttemptJobs } from '../../runner/daemon/slurm-attempt-jobs.js';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { SUBMIT_TRIES } from '../../runner/sandbox/slurm-submit-script.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { fakeCommand, realCommand, UNREACHABLE } from './fake-slurm.js';
import { firstLine, inQueue, jobFields, startSlurm, waitFor } from './slurm-job.js';

const run = promisify(execFile);

let dir: string;
let shims: string;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-submit-crash-'));
  shims = join(dir, 'shims');
  await mkdir(shims);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The ids of the jobs Slurm knows whose comment starts with `prefix` (a run's `fluksio:RUN:`). */
async function jobsCommented(prefix: string): Promise<string[]> {
  const { stdout } = await run('squeue', ['--noheader', '--states=all', '--format=%i|%k']);
  return stdout
    .split('\n')
    .filter((line) => line.slice(line.indexOf('|') + 1).startsWith(prefix))
    .map((line) => line.slice(0, line.indexOf('|')));
}

/**
 * Puts an `sbatch` in `shims` that queues the job with the real sbatch, writes its id to
 * `dir/queued`, then hangs before answering: the attach process that ran it is killed
 * there, after Slurm took the job and before its id was kept (a runner's whole process
 * group killed: a container restarted, the OOM killer, `systemctl kill -s KILL`).
 */
/**
 * Puts a `sleep` in `shims` that returns at once for the submit script's waits, which it
 * writes with three decimals (`submit_nap`, `nap`), and sleeps for real otherwise (a job's
 * own `sleep 300`).
 */
async function sleepThatSkipsBackoff(): Promise<void> {
  const sleep = await realCommand('sleep');
  await writeFile(
    join(shims, 'sleep'),
    `#!/bin/bash
if [[ $# -eq 1 && $1 =~ ^[0-9]+\\.[0-9]{3}$ ]]; then exec ${sleep} 0.01; fi
exec ${sleep} "$@"
`,
  );
  await chmod(join(shims, 'sleep'), 0o755);
}

/** Queues `cmd` through an attach process killed once sbatch queued the job, before its id was kept; its id. */
async function jobOfKilledSubmission(launcher: SlurmLauncher, cmd: string, runId: string): Promise<string> {
  const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 }, runId };
  const queued = await sbatchThatHangsOnceQueued();
  const first = launcher.launch(cmd, dir, [], stage);
  const child = spawn(first.file, first.args, {
    cwd: dir,
    env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    stdio: 'ignore',
    detached: true,
  });
  let job = '';
  await waitFor('sbatch to queue the job', async () => (job = await firstLine(queued)) !== '');
  process.kill(-(child.pid ?? 0), 'SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return job;
}

async function sbatchThatHangsOnceQueued(): Promise<string> {
  const queued = join(dir, 'queued');
  await writeFile(
    join(shims, 'sbatch'),
    `#!/bin/bash
out=$(${await realCommand('sbatch')} "$@") || exit
printf '%s\\n' "$out" >'${queued}'
sleep 600
printf '%s\\n' "$out"
`,
  );
  await chmod(join(shims, 'sbatch'), 0o755);
  return queued;
}

test('an attach process killed between sbatch queuing the job and keeping its id: the next launch re-attaches to that job, never submitting a second', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const runId = `crash-${randomUUID()}`;
  const cmd = 'echo "job $SLURM_JOB_ID" && sleep 2 && echo done';
  const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 }, runId };
  const path = `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  const queued = await sbatchThatHangsOnceQueued();
  const first = launcher.launch(cmd, dir, [], stage);
  const child = spawn(first.file, first.args, {
    cwd: dir,
    env: { PATH: path },
    stdio: 'ignore',
    detached: true,
  });
  let job = '';
  await waitFor('sbatch to queue the job', async () => (job = await firstLine(queued)) !== '');
  // The attach process, its sbatch and all, killed hard before sbatch answered.
  process.kill(-(child.pid ?? 0), 'SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  // The engine asks first, so as not to remove the outs the job may be writing.
  expect(launcher.reattaches(stage)).toBe(true);

  const lines: string[] = [];
  const result = await runStageProcess({
    cmd,
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 60_000,
    launcher,
    stage,
    onLine: (_stream, line) => lines.push(line),
  });
  expect(result.exitCode, lines.join('\n')).toBe(0);
  expect(lines).toEqual(
    expect.arrayContaining([`fluksio: re-attached to Slurm job ${job}`, `job ${job}`, 'done']),
  );
  expect(lines.some((line) => line.startsWith('fluksio: submitted'))).toBe(false);
  expect(await jobsCommented(`fluksio:${runId}:`)).toEqual([job]);
  expect((await jobFields(job)).JobState).toBe('COMPLETED');
  expect(launcher.reattaches(stage)).toBe(false);
}, 90_000);

test('a job queued by an sbatch whose attach process was killed before keeping its id is cancelled with its attempt’s jobs', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const runId = `crash-${randomUUID()}`;
  const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 }, runId };
  const queued = await sbatchThatHangsOnceQueued();
  const first = launcher.launch('sleep 300', dir, [], stage);
  const child = spawn(first.file, first.args, {
    cwd: dir,
    env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    stdio: 'ignore',
    detached: true,
  });
  let job = '';
  await waitFor('sbatch to queue the job', async () => (job = await firstLine(queued)) !== '');
  process.kill(-(child.pid ?? 0), 'SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));

  // A runner that does not resume the run (or ends the attempt) cancels what it left.
  expect(await cancelAttemptJobs(join(dir, 'jobs'), { warn: () => undefined })).toEqual([job]);
  await waitFor(`job ${job} to leave the queue`, async () => !(await inQueue(job)));
  expect((await jobFields(job)).JobState).toBe('CANCELLED');
}, 90_000);

test('a job queued before its id was kept survives a cancel while squeue fails, its marker kept, and is cancelled by the next once squeue answers', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const job = await jobOfKilledSubmission(launcher, 'sleep 300', `crash-${randomUUID()}`);
  // slurmctld just restarted: squeue cannot reach it.
  const down = join(dir, 'down');
  await mkdir(down);
  await writeFile(
    join(down, 'squeue'),
    "#!/bin/bash\necho 'squeue: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n",
  );
  await chmod(join(down, 'squeue'), 0o755);
  const warnings: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => void warnings.push(args) };
  const path = process.env.PATH;
  process.env.PATH = `${down}:${path ?? '/usr/bin:/bin'}`;
  try {
    expect(await cancelAttemptJobs(join(dir, 'jobs'), logger)).toEqual([]);
  } finally {
    process.env.PATH = path;
  }
  expect(warnings).toHaveLength(1);
  expect((await readdir(join(dir, 'jobs'))).filter((file) => file.endsWith('.job.submitting'))).toHaveLength(
    1,
  );
  expect(await inQueue(job)).toBe(true);

  // A later start, squeue answering again, finds the job by its marker and cancels it.
  expect(await cancelAttemptJobs(join(dir, 'jobs'), logger)).toEqual([job]);
  await waitFor(`job ${job} to leave the queue`, async () => !(await inQueue(job)));
  expect((await jobFields(job)).JobState).toBe('CANCELLED');
  expect(warnings).toHaveLength(1);
}, 90_000);

test('the last sbatch timing out while squeue cannot say whether it queued the job keeps the marker, so the job is cancelled with its attempt’s', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const runId = `crash-${randomUUID()}`;
  const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 }, runId };
  const timedOut = 'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation';
  // Every sbatch times out; the last one queued the job all the same.
  const count = join(dir, 'sbatch.count');
  await writeFile(
    join(shims, 'sbatch'),
    `#!/bin/bash
echo call >>'${count}'
if [ "$(wc -l <'${count}')" -ge ${SUBMIT_TRIES} ]; then ${await realCommand('sbatch')} "$@" >'${dir}/queued' || exit; fi
echo '${timedOut}' >&2
exit 1
`,
  );
  await chmod(join(shims, 'sbatch'), 0o755);
  // The backoff between the tries (0.5 s doubling to 30 s, two minutes in all) is cut short.
  await sleepThatSkipsBackoff();
  // squeue answers the checks between tries, and fails at the last.
  const squeue = await realCommand('squeue');
  await fakeCommand(shims, 'squeue', [
    ...Array.from({ length: SUBMIT_TRIES - 1 }, () => ({ real: squeue })),
    UNREACHABLE,
  ]);
  const first = launcher.launch('sleep 300', dir, [], stage);
  const child = spawn(first.file, first.args, {
    cwd: dir,
    env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    stdio: 'ignore',
  });
  expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(1);
  const job = (await firstLine(join(dir, 'queued'))).split(';')[0] ?? '';
  expect(job).not.toBe('');
  expect(await jobsCommented(`fluksio:${runId}:`)).toEqual([job]);
  expect((await readdir(join(dir, 'jobs'))).filter((file) => file.endsWith('.job.submitting'))).toHaveLength(
    1,
  );

  expect(await cancelAttemptJobs(join(dir, 'jobs'), { warn: () => undefined })).toEqual([job]);
  await waitFor(`job ${job} to leave the queue`, async () => !(await inQueue(job)));
  expect((await jobFields(job)).JobState).toBe('CANCELLED');
}, 90_000);
