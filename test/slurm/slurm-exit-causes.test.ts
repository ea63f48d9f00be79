import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { JobStatus } from '../../runner/sandbox/job-status-line.js';
import {
  REQUEUED_END,
  REQUEUED_EXIT_CODE,
  SLURM_END_STATES,
  slurmExitCause,
  UNKNOWN_JOB_END,
  UNKNOWN_JOB_EXIT_CODE,
} from '../../runner/sandbox/slurm-exit-causes.js';
import { StageJobStatus } from '../../runner/stage-job-status.js';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { fakeCalls, fakeCommand, INVALID_JOB, NO_ACCOUNTING, type FakeReply } from './fake-slurm.js';

/*
 * The single-node Slurm of the tests (scripts/start-slurm.sh) enforces no memory limit
 * (SelectTypeParameters=CR_Core, TaskPlugin=task/none, no cgroups), so no job there ends
 * OUT_OF_MEMORY, and none ends NODE_FAIL, PREEMPTED, BOOT_FAIL or DEADLINE either: every
 * cause is tested here through the attach process, with squeue and the rest stood in for.
 * TIMEOUT, cancel and requeue are also tested on the real Slurm (slurm-stop, slurm-requeue).
 */

describe('each way Slurm ends a job is named in the stage’s error, from what the attach process reported', () => {
  test.each([
    {
      endedBy: 'CANCELLED',
      cause: 'Slurm cancelled the job (scancel from outside fluksio)',
      givesBack: false,
    },
    {
      endedBy: 'TIMEOUT',
      cause: 'Slurm ended the job: TIMEOUT (it ran past its time limit)',
      givesBack: false,
    },
    {
      endedBy: 'OUT_OF_MEMORY',
      cause: 'Slurm ended the job: OUT_OF_MEMORY (it used more than its memory)',
      givesBack: false,
    },
    { endedBy: 'NODE_FAIL', cause: 'Slurm ended the job: NODE_FAIL (its node failed)', givesBack: false },
    {
      endedBy: 'PREEMPTED',
      cause: 'Slurm ended the job: PREEMPTED (another job took its resources)',
      givesBack: true,
    },
    {
      endedBy: 'BOOT_FAIL',
      cause: 'Slurm ended the job: BOOT_FAIL (its node did not boot)',
      givesBack: false,
    },
    {
      endedBy: 'DEADLINE',
      cause: 'Slurm ended the job: DEADLINE (it could not end before its deadline)',
      givesBack: false,
    },
    { endedBy: REQUEUED_END, cause: 'Slurm requeued the job', givesBack: true },
    {
      endedBy: UNKNOWN_JOB_END,
      cause: 'Slurm no longer knows job 4242 (squeue, sacct and scontrol lost it before it was seen to end)',
      givesBack: false,
    },
    // The job's own command ended it (whatever its code), or a word fluksio does not use.
    { endedBy: null, cause: null, givesBack: false },
    { endedBy: 'COMPLETED', cause: null, givesBack: false },
  ])('ended by $endedBy → $cause', ({ endedBy, cause, givesBack }) => {
    const launcher = new SlurmLauncher('/nonexistent');
    expect(launcher.explainExit({ job: '4242', endedBy })).toBe(cause);
    expect(slurmExitCause({ job: '4242', endedBy })).toBe(cause);
    expect(launcher.givesBack({ job: '4242', endedBy })).toBe(givesBack);
  });

  test('a job no source knows is named as such even when its id was never reported', () => {
    expect(slurmExitCause({ job: null, endedBy: UNKNOWN_JOB_END })).toBe(
      'Slurm no longer knows the job (squeue, sacct and scontrol lost it before it was seen to end)',
    );
  });
});

describe('the attach process, with Slurm stood in for', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-causes-'));
    await fakeCommand(dir, 'sbatch', [{ stdout: '4242' }]);
    await fakeCommand(dir, 'sacct', [NO_ACCOUNTING]);
    await fakeCommand(dir, 'scancel', [{}]);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Launches a stage through the Slurm launcher whose squeue and scontrol answer these. */
  async function follow(squeue: FakeReply[], scontrol: FakeReply[] = [INVALID_JOB]) {
    await fakeCommand(dir, 'squeue', squeue);
    await fakeCommand(dir, 'scontrol', scontrol);
    const launcher = new SlurmLauncher(join(dir, 'jobs'), { unknownJobGraceMs: 300 });
    const statuses: JobStatus[] = [];
    const jobStatus = new StageJobStatus('train', { emit: () => {}, flush: async () => {} });
    const lines: string[] = [];
    const result = await runStageProcess({
      cmd: 'true',
      cwd: dir,
      env: { PATH: `${dir}:/usr/bin:/bin` },
      timeoutMs: 30_000,
      launcher,
      stage: { name: 'train', jobKey: 'k', resources: {} },
      onLine: (_stream, line) => lines.push(line),
      onJobStatus: (status) => {
        statuses.push(status);
        jobStatus.take(status);
      },
    });
    return {
      exitCode: result.exitCode,
      cause: launcher.explainExit(jobStatus),
      givesBack: launcher.givesBack(jobStatus),
      statuses,
      lines,
    };
  }

  test.each(Object.entries(SLURM_END_STATES).filter(([state]) => state !== 'CANCELLED'))(
    'a job that ends %s exits with its code, and the cause is named',
    async (state, end) => {
      const followed = await follow([{ stdout: 'RUNNING|None|vm|0|' }, { stdout: `${state}|None|vm|0|` }]);
      expect(followed.exitCode, followed.lines.join('\n')).toBe(end.code);
      expect(followed.cause).toBe(end.cause);
      expect(followed.givesBack).toBe(state === 'PREEMPTED');
    },
  );

  test.each([
    REQUEUED_EXIT_CODE,
    ...Object.values(SLURM_END_STATES).map((end) => end.code),
    UNKNOWN_JOB_EXIT_CODE,
  ])(
    'a job whose own command exits %i fails with that code: no Slurm cause is read from it, and the run is not given back',
    async (code) => {
      // Slurm says the job FAILED, its command's exit code from scontrol (no accounting).
      const followed = await follow(
        [{ stdout: 'RUNNING|None|vm|0|' }, { stdout: 'FAILED|NonZeroExitCode|vm|0|' }],
        [
          {
            stdout: `JobId=4242 JobState=FAILED Reason=NonZeroExitCode ExitCode=${code}:0 NodeList=vm Restarts=0`,
          },
        ],
      );
      expect(followed.exitCode, followed.lines.join('\n')).toBe(code);
      expect(followed.statuses.some((status) => status.endedBy !== undefined)).toBe(false);
      expect(followed.cause).toBeNull();
      expect(followed.givesBack).toBe(false);
    },
  );

  test('a job cancelled from outside fluksio', async () => {
    const followed = await follow([{ stdout: 'CANCELLED|None|vm|0|' }]);
    expect(followed.cause).toBe('Slurm cancelled the job (scancel from outside fluksio)');
    expect(followed.statuses.at(-1)).toEqual({ job: '4242', pending: null, endedBy: 'CANCELLED' });
  });

  test('why a job waits is reported each time it changes, and that it stopped waiting once it runs', async () => {
    const followed = await follow([
      { stdout: 'PENDING|None||0|' },
      { stdout: 'PENDING|Priority||0|' },
      { stdout: 'PENDING|Priority||0|' },
      { stdout: 'PENDING|Resources||0|' },
      { stdout: 'RUNNING|None|vm|0|' },
      { stdout: 'COMPLETED|None|vm|0|' },
    ]);
    expect(followed.exitCode).toBe(0);
    expect(followed.statuses).toEqual([
      { job: '4242', pending: null },
      { job: '4242', pending: { job: '4242', reason: 'Priority' } },
      { job: '4242', pending: { job: '4242', reason: 'Resources' } },
      { job: '4242', pending: null },
    ]);
    expect(followed.lines).toEqual(
      expect.arrayContaining([
        'fluksio: pending: Priority (Slurm job 4242)',
        'fluksio: pending: Resources (Slurm job 4242)',
        'fluksio: Slurm job 4242 running on vm',
      ]),
    );
  });

  test('a job requeued (its restart count grew) is cancelled and given back', async () => {
    const followed = await follow([{ stdout: 'RUNNING|None|vm|0|' }, { stdout: 'PENDING|BeginTime||1|' }]);
    expect(followed.exitCode).toBe(REQUEUED_EXIT_CODE);
    expect(followed.cause).toBe('Slurm requeued the job');
    expect(followed.givesBack).toBe(true);
    expect(await fakeCalls(dir)).toContain('scancel 4242');
  });

  test('a job every source stopped knowing ends the stage once the grace period passed, cancelled in case', async () => {
    const followed = await follow([{ stdout: 'RUNNING|None|vm|0|' }, INVALID_JOB]);
    expect(followed.exitCode).toBe(UNKNOWN_JOB_EXIT_CODE);
    expect(followed.cause).toBe(
      'Slurm no longer knows job 4242 (squeue, sacct and scontrol lost it before it was seen to end)',
    );
    expect(followed.lines).toContain(
      'fluksio: Slurm no longer knows job 4242: not in squeue, sacct or scontrol for 0.3 s',
    );
    expect(await fakeCalls(dir)).toContain('scancel 4242');
  });
});
