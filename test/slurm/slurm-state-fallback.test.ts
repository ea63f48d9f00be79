import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, onTestFinished, test } from 'vitest';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { StageJobStatus } from '../../runner/stage-job-status.js';
import {
  DBD_UNREACHABLE,
  fakeCalls,
  fakeCommand,
  INVALID_JOB,
  NO_ACCOUNTING,
  realCommand,
  UNREACHABLE,
} from './fake-slurm.js';
import { firstLine, jobFields, startSlurm, waitFor } from './slurm-job.js';

/*
 * The real Slurm, with squeue, sacct, scontrol and sbatch behind stand-ins (fake-slurm.ts)
 * that fail or forget the job where a test says, and otherwise run the real command and
 * log the call. The test cluster keeps accounting: its sacct knows each job, RUNNING until
 * the job's end reaches slurmdbd, which may be a moment after squeue and scontrol see it.
 */

let dir: string;
let shims: string;
const real: Record<string, string> = {};
beforeAll(async () => {
  await startSlurm();
  for (const name of ['squeue', 'sacct', 'scontrol', 'sbatch', 'scancel'])
    real[name] = await realCommand(name);
}, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-fallback-'));
  shims = join(dir, 'shims');
  await mkdir(shims);
  for (const name of Object.keys(real)) await fakeCommand(shims, name, [{ real: real[name] ?? name }]);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 } };
const env = () => ({ PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` });
const asked = async (name: string) => (await fakeCalls(shims)).filter((call) => call.startsWith(`${name} `));

async function launch(cmd: string, launcher = new SlurmLauncher(join(dir, 'jobs'))) {
  const lines: string[] = [];
  const jobStatus = new StageJobStatus('train', { emit: () => {}, flush: async () => {} });
  const result = await runStageProcess({
    cmd,
    cwd: dir,
    env: env(),
    timeoutMs: 60_000,
    launcher,
    stage,
    onLine: (_stream, line) => lines.push(line),
    onJobStatus: (status) => jobStatus.take(status),
  });
  return { exitCode: result.exitCode, lines, cause: launcher.explainExit(jobStatus) };
}

/**
 * Puts stand-ins for squeue, sacct and scontrol in the shims that answer as for a job Slurm
 * does not know (squeue and scontrol "Invalid job id", sacct no accounting) until a scancel
 * went through, and the real commands from then on; and a scancel that marks when it did.
 * Each call is logged as fakeCommand's are.
 */
async function blindUntilCancelled(): Promise<void> {
  const calls = join(shims, 'calls');
  const cancelled = join(shims, 'cancelled');
  const shim = async (name: string, body: string) => {
    const file = join(shims, name);
    await writeFile(file, `#!/bin/bash\nprintf '%s %s\\n' ${name} "$*" >>'${calls}'\n${body}\n`);
    await chmod(file, 0o755);
  };
  await shim('scancel', `'${real.scancel ?? 'scancel'}' "$@" && : >'${cancelled}'`);
  for (const name of ['squeue', 'sacct', 'scontrol']) {
    const unknown = name === 'sacct' ? NO_ACCOUNTING : INVALID_JOB;
    const stderr = 'stderr' in unknown ? unknown.stderr : '';
    await shim(
      name,
      `if [ -e '${cancelled}' ]; then exec '${real[name] ?? name}' "$@"; fi\nprintf '%s\\n' '${stderr}' >&2\nexit 1`,
    );
  }
}

/** Submits the stage's job through an attach process killed hard once the job is queued (a runner killed with -9). */
async function orphanedJob(cmd: string): Promise<string> {
  const first = new SlurmLauncher(join(dir, 'jobs')).launch(cmd, dir, [], stage);
  const child = spawn(first.file, first.args, { cwd: dir, env: env(), stdio: 'ignore' });
  let job = '';
  await waitFor(
    'the job id to be kept',
    async () => (job = await firstLine(join(dir, 'jobs', 'k1-train.job'))) !== '',
  );
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return job;
}

test('squeue failing: the job is followed through sacct and then scontrol, to its exit code', async () => {
  await fakeCommand(shims, 'squeue', [UNREACHABLE]);
  const followed = await launch('echo "job $SLURM_JOB_ID" && sleep 1 && echo done && exit 3');
  expect(followed.exitCode, followed.lines.join('\n')).toBe(3);
  expect(followed.lines).toEqual(expect.arrayContaining(['done']));
  expect(followed.lines.some((line) => line.includes('could not read the state'))).toBe(false);
  expect((await asked('squeue')).length).toBeGreaterThan(0);
  expect((await asked('sacct')).length).toBeGreaterThan(0);
  expect((await asked('scontrol')).length).toBeGreaterThan(0);
}, 60_000);

test('squeue and scontrol failing throughout: the job is followed through the accounting alone, to its exit code', async () => {
  await fakeCommand(shims, 'squeue', [UNREACHABLE]);
  await fakeCommand(shims, 'scontrol', [UNREACHABLE]);
  const followed = await launch('echo "job $SLURM_JOB_ID" && sleep 1 && echo done && exit 3');
  expect(followed.exitCode, followed.lines.join('\n')).toBe(3);
  expect(followed.lines).toEqual(expect.arrayContaining(['done']));
  expect(followed.lines.some((line) => line.includes('could not read the state'))).toBe(false);
  expect((await asked('sacct')).length).toBeGreaterThan(1);
}, 60_000);

test('the accounting behind (its record still RUNNING when squeue says FAILED): the exit code is scontrol’s, not the record’s', async () => {
  await fakeCommand(shims, 'sacct', [{ stdout: 'RUNNING|None|0:0|vm|Unknown' }]);
  const followed = await launch('echo "job $SLURM_JOB_ID" && exit 3');
  expect(followed.exitCode, followed.lines.join('\n')).toBe(3);
  expect((await asked('scontrol')).length).toBeGreaterThan(0);
}, 60_000);

test('every source failing when a launch re-attaches: asked again with backoff, the job never submitted twice', async () => {
  const job = await orphanedJob('echo "job $SLURM_JOB_ID" && sleep 2 && echo done');
  await fakeCommand(shims, 'squeue', [
    UNREACHABLE,
    UNREACHABLE,
    UNREACHABLE,
    { real: real.squeue ?? 'squeue' },
  ]);
  await fakeCommand(shims, 'scontrol', [
    UNREACHABLE,
    UNREACHABLE,
    UNREACHABLE,
    { real: real.scontrol ?? 'scontrol' },
  ]);
  await fakeCommand(shims, 'sacct', [
    DBD_UNREACHABLE,
    DBD_UNREACHABLE,
    DBD_UNREACHABLE,
    { real: real.sacct ?? 'sacct' },
  ]);
  const submitted = (await asked('sbatch')).length;
  const followed = await launch('echo "job $SLURM_JOB_ID" && sleep 2 && echo done');
  expect(followed.exitCode, followed.lines.join('\n')).toBe(0);
  const said = (text: string) => followed.lines.filter((line) => line === text).length;
  expect(
    said(
      `fluksio: could not read the state of Slurm job ${job} (squeue, sacct and scontrol all failed): asking again`,
    ),
  ).toBe(1);
  expect(said(`fluksio: re-attached to Slurm job ${job}`)).toBe(1);
  expect(followed.lines).toEqual(expect.arrayContaining([`job ${job}`, 'done']));
  expect(await asked('sbatch')).toHaveLength(submitted);
  expect((await jobFields(job)).JobState).toBe('COMPLETED');
}, 60_000);

test('a kept job id Slurm calls unknown for a moment (slurmctld just restarted) is re-attached to once Slurm knows it again, never submitted twice', async () => {
  const go = join(dir, 'go');
  const cmd = `echo "job $SLURM_JOB_ID" && until [ -e ${go} ]; do sleep 0.2; done && echo done`;
  const job = await orphanedJob(cmd);
  await waitFor('the job to run', async () => (await jobFields(job)).JobState === 'RUNNING');
  // Every source forgets the job for three rounds of asking, then knows it again.
  await fakeCommand(shims, 'squeue', [
    INVALID_JOB,
    INVALID_JOB,
    INVALID_JOB,
    { real: real.squeue ?? 'squeue' },
  ]);
  await fakeCommand(shims, 'sacct', [
    NO_ACCOUNTING,
    NO_ACCOUNTING,
    NO_ACCOUNTING,
    { real: real.sacct ?? 'sacct' },
  ]);
  await fakeCommand(shims, 'scontrol', [
    INVALID_JOB,
    INVALID_JOB,
    INVALID_JOB,
    { real: real.scontrol ?? 'scontrol' },
  ]);
  const submitted = (await asked('sbatch')).length;
  const following = launch(cmd);
  await waitFor(
    'the launch to ask Slurm again after it knew the job',
    async () => (await asked('squeue')).length > 3,
  );
  await writeFile(go, '');
  const followed = await following;
  expect(followed.exitCode, followed.lines.join('\n')).toBe(0);
  expect(followed.lines).toEqual(
    expect.arrayContaining([
      `fluksio: Slurm does not know job ${job}: asking again for up to 60.0 s before submitting the stage again`,
      `fluksio: re-attached to Slurm job ${job}`,
      'done',
    ]),
  );
  expect(await asked('sbatch')).toHaveLength(submitted);
  expect(await asked('scancel')).toEqual([]);
  expect((await jobFields(job)).JobState).toBe('COMPLETED');
}, 60_000);

test('a kept job id no source knows for the whole grace period is cancelled, and only then is the stage submitted again', async () => {
  await mkdir(join(dir, 'jobs'), { recursive: true });
  await writeFile(join(dir, 'jobs', 'k1-train.job'), '999999\n');
  // slurmctld is out of reach for the first cancels: the stage waits for one that is answered.
  await fakeCommand(shims, 'scancel', [UNREACHABLE, UNREACHABLE, { real: real.scancel ?? 'scancel' }]);
  const launcher = new SlurmLauncher(join(dir, 'jobs'), { unknownJobGraceMs: 1000 });
  const followed = await launch('echo "job $SLURM_JOB_ID"', launcher);
  expect(followed.exitCode, followed.lines.join('\n')).toBe(0);
  expect(followed.lines[0]).toBe(
    'fluksio: Slurm does not know job 999999: asking again for up to 1.0 s before submitting the stage again',
  );
  expect(followed.lines).toContain(
    'fluksio: Slurm no longer knows job 999999: not in squeue, sacct or scontrol for 1.0 s; cancelled it, submitting the stage again',
  );
  expect(followed.lines).toEqual(
    expect.arrayContaining([expect.stringMatching(/^fluksio: submitted Slurm job \d+$/)]),
  );
  const calls = (await fakeCalls(shims)).filter((call) => /^(scancel|sbatch) /.test(call));
  expect(calls.map((call) => call.split(' ')[0])).toEqual(['scancel', 'scancel', 'scancel', 'sbatch']);
  expect(calls[2]).toBe('scancel 999999');
}, 60_000);

test('a kept job Slurm lost track of but still runs is cancelled and over before the stage is submitted again: never two copies at once', async () => {
  const old = await orphanedJob('echo "job $SLURM_JOB_ID" && sleep 300');
  // Should the test fail, its job must not hold a CPU of the shared test cluster.
  onTestFinished(() => new Promise((done) => execFile('scancel', [old], () => done())));
  await waitFor('the job to run', async () => (await jobFields(old)).JobState === 'RUNNING');
  // Every source says it does not know the job until fluksio cancelled it (a slurmctld
  // that lost it for longer than the grace period and found it again).
  await blindUntilCancelled();
  const launcher = new SlurmLauncher(join(dir, 'jobs'), { unknownJobGraceMs: 500 });
  const followed = await launch('echo "job $SLURM_JOB_ID"', launcher);
  expect(followed.exitCode, followed.lines.join('\n')).toBe(0);
  const fresh =
    followed.lines.map((line) => /^fluksio: submitted Slurm job (\d+)$/.exec(line)?.[1]).find(Boolean) ?? '';
  expect(fresh).not.toBe('');
  expect(fresh).not.toBe(old);
  const [before, after] = await Promise.all([jobFields(old), jobFields(fresh)]);
  expect(before.JobState).toBe('CANCELLED');
  // Slurm's own record: the new job started no earlier than the old one ended.
  expect(Date.parse(after.StartTime ?? '') >= Date.parse(before.EndTime ?? '')).toBe(true);
  const calls = (await fakeCalls(shims)).map((call) => call.split(' ')[0]);
  expect(calls.lastIndexOf('sbatch')).toBeGreaterThan(calls.indexOf('scancel'));
}, 60_000);

test('a job every source stopped knowing (purged from slurmctld, no final record) ends the stage with that cause, and is cancelled', async () => {
  // squeue answers for its first calls, then says "Invalid job id" as for a purged job;
  // scontrol, asked then, says the same. sacct's record still says RUNNING: for a job
  // slurmctld no longer knows, that is an end not recorded yet, no sign of life.
  const squeue = { real: real.squeue ?? 'squeue' };
  await fakeCommand(shims, 'squeue', [squeue, squeue, squeue, squeue, squeue, INVALID_JOB]);
  await fakeCommand(shims, 'scontrol', [INVALID_JOB]);
  const launcher = new SlurmLauncher(join(dir, 'jobs'), { unknownJobGraceMs: 1000 });
  const followed = await launch('echo "job $SLURM_JOB_ID" && sleep 300', launcher);
  const job = /^fluksio: submitted Slurm job (\d+)$/.exec(followed.lines[0] ?? '')?.[1] ?? '';
  expect(followed.cause, followed.lines.join('\n')).toBe(
    `Slurm no longer knows job ${job} (squeue, sacct and scontrol lost it before it was seen to end)`,
  );
  expect(followed.lines).toContain(
    `fluksio: Slurm no longer knows job ${job}: not in squeue, sacct or scontrol for 1.0 s`,
  );
  // Only the queries lost it here: the job itself is cancelled, holding nothing.
  await waitFor('the job to be cancelled', async () => (await jobFields(job)).JobState === 'CANCELLED');
}, 60_000);
