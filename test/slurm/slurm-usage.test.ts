import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { formatCompute, formatHours } from '../../core/text/format-compute.js';
import {
  jobFieldsOf,
  readSlurmUsage,
  usageFromJobFields,
  usageFromSacct,
} from '../../runner/sandbox/slurm-usage.js';
import {
  DBD_UNREACHABLE,
  fakeCalls,
  fakeCommand,
  NO_ACCOUNTING,
  realCommand,
  type FakeReply,
} from './fake-slurm.js';
import { accountedJob, jobFields, startSlurm, submitJob } from './slurm-job.js';

test.each([
  [
    'COMPLETED|2026-12-02T12:00:05|billing=2,cpu=2,gres/gpu=1,mem=4000M,node=1|3600|7200\n',
    { cpuSeconds: 7200, gpuSeconds: 3600 },
  ],
  [
    'FAILED|2026-12-02T12:00:05|cpu=8,gres/gpu:a100=2,gres/gpu=2,node=1|10|80\n',
    { cpuSeconds: 80, gpuSeconds: 20 },
  ],
  [
    'TIMEOUT|2026-12-02T12:00:05|cpu=4,gres/gpu:a100=1,gres/gpu:v100=2|100|400',
    { cpuSeconds: 400, gpuSeconds: 300 },
  ],
  ['CANCELLED by 0|2026-12-02T12:00:05|cpu=1,node=1|5|5', { cpuSeconds: 5, gpuSeconds: 0 }],
  ['OUT_OF_MEMORY|2026-12-02T12:00:05|cpu=1,node=1|5|5', { cpuSeconds: 5, gpuSeconds: 0 }],
  ['CANCELLED by 0|2026-12-02T12:00:05||0|0', { cpuSeconds: 0, gpuSeconds: 0 }],
])('sacct %j: CPUTimeRAW, and GPUs × ElapsedRaw', (output, expected) => {
  expect(usageFromSacct('42', output)).toEqual({ job: '42', source: 'sacct', ...expected });
});

test.each([
  [
    'no gres/gpu tracked: the GPUs it was submitted with',
    'COMPLETED|2026-12-02T12:00:05|billing=1,cpu=1,mem=4000M,node=1|10|10',
    2,
    20,
  ],
  ['no gres/gpu tracked, submitted without GPUs', 'COMPLETED|2026-12-02T12:00:05|cpu=1,node=1|10|10', 0, 0],
  [
    'gres/gpu tracked: the accounting, not the request',
    'COMPLETED|2026-12-02T12:00:05|cpu=1,gres/gpu=1,node=1|10|10',
    2,
    10,
  ],
  ['typed gres/gpu tracked', 'COMPLETED|2026-12-02T12:00:05|cpu=1,gres/gpu:a100=3|10|10', 1, 30],
  ['cancelled before it started', 'CANCELLED by 0|2026-12-02T12:00:05||0|0', 2, 0],
])('sacct GPU-seconds, %s', (_why, output, submittedGpus, gpuSeconds) => {
  expect(usageFromSacct('42', output, submittedGpus)?.gpuSeconds).toBe(gpuSeconds);
});

test.each([
  ['no job line', ''],
  ['no job line', '\n'],
  ['no figures', 'COMPLETED|2026-12-02T12:00:05||Unknown|'],
  ['still running (its end not accounted yet)', 'RUNNING|Unknown|cpu=1,node=1|3|3'],
  ['still pending, as a record without its start', 'PENDING|Unknown||1|0'],
  ['over as its steps ended, its own end not accounted yet', 'FAILED|Unknown|cpu=1,node=1|6|6'],
  ['requeued', 'REQUEUED|2026-12-02T12:00:05|cpu=1,node=1|3|3'],
  ['over, but its allocation not accounted yet', 'COMPLETED|2026-12-02T12:00:05||2|2'],
])('a sacct record that is not final (%s: %j) gives no usage', (_why, output) => {
  expect(usageFromSacct('42', output)).toBeNull();
});

test.each([
  ['RunTime=00:00:02 NumCPUs=2 TRES=cpu=2,node=1,billing=2 JOB_GRES=gpu:1', 4, 2],
  ['RunTime=1-00:00:00 NumCPUs=1 TRES=cpu=1,gres/gpu=2 JOB_GRES=gpu:1', 86_400, 172_800],
  ['RunTime=01:00 NumCPUs=4 TRES=cpu=4 JOB_GRES=(null) TresPerJob=gres:gpu:3', 240, 180],
  ['RunTime=00:00:10 NumCPUs=1 TRES=cpu=1 JOB_GRES=gpu:a100:2(IDX:0-1)', 10, 20],
  ['RunTime=00:00:10 NumCPUs=2 NumNodes=2 TRES=cpu=2 TresPerNode=gres/gpu:1', 20, 20],
  ['RunTime=00:00:07 NumCPUs=3 TRES=cpu=3,node=1', 21, 0],
])('scontrol %j: allocated CPUs and GPUs × RunTime', (line, cpuSeconds, gpuSeconds) => {
  expect(usageFromJobFields('7', jobFieldsOf(line))).toEqual({
    job: '7',
    source: 'allocation',
    cpuSeconds,
    gpuSeconds,
  });
});

test('a job Slurm never ran has no usage', () => {
  expect(usageFromJobFields('7', jobFieldsOf('JobState=PENDING RunTime=INVALID NumCPUs=1'))).toBeNull();
});

test.each([
  [0, '0'],
  [3, '0.00083'],
  [36, '0.01'],
  [5400, '1.50'],
  [1_000_000, '277.8'],
])('%d s is %s hours', (seconds, text) => {
  expect(formatHours(seconds)).toBe(text);
});

test('a run’s compute reads as CPU- and GPU-hours', () => {
  expect(formatCompute({ cpuSeconds: 7200, gpuSeconds: 3600 })).toBe('2.00 CPU-hours, 1.00 GPU-hours');
});

describe('readSlurmUsage on the test cluster, whose accounting lags behind its jobs', () => {
  let job: string;
  let record: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    await startSlurm();
    job = await submitJob('sleep 1', ['--gpus=1', '--cpus-per-task=1', '--job-name=fluksio-test-usage']);
    record = await accountedJob(job, ['AllocTRES', 'ElapsedRaw', 'CPUTimeRAW']);
  }, 180_000);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-usage-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** readSlurmUsage with sacct stood in for (answering `replies`, `{ real }` for the real one), and the calls it took. */
  async function usageWith(
    replies: FakeReply[],
    options: { accountingWaitMs?: number; signal?: AbortSignal } = {},
  ) {
    await fakeCommand(dir, 'sacct', replies);
    const env = { PATH: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}` };
    const usage = await readSlurmUsage(job, { ...options, env });
    return { usage, asked: (await fakeCalls(dir)).length };
  }
  /** A record of the job as sacct shows it before its end arrived. */
  const stillRunning: FakeReply = { stdout: 'RUNNING|Unknown|billing=1,cpu=1,gres/gpu=1,node=1|0|0' };
  const accounted = () => ({
    job,
    source: 'sacct',
    cpuSeconds: Number(record.CPUTimeRAW),
    gpuSeconds: Number(record.ElapsedRaw),
  });
  const allocated = async () => usageFromJobFields(job, await jobFields(job));

  test('a finished job’s figures are its final record’s: CPUTimeRAW, and its one GPU × ElapsedRaw', async () => {
    expect(record.AllocTRES).toContain('gres/gpu=1');
    expect(Number(record.ElapsedRaw)).toBeGreaterThanOrEqual(1);
    expect(await readSlurmUsage(job)).toEqual(accounted());
  });

  test('a record whose end has not arrived yet is asked for again, then read', async () => {
    const real = await realCommand('sacct');
    const { usage, asked } = await usageWith([stillRunning, stillRunning, { real }]);
    expect(usage).toEqual(accounted());
    expect(asked).toBe(3);
  });

  test('a record that stays unfinished: the allocation, once the wait is over', async () => {
    // Room for more than one sacct (each a process, a few hundred ms on a busy machine).
    const { usage, asked } = await usageWith([stillRunning], { accountingWaitMs: 3_000 });
    expect(usage).toMatchObject({ job, source: 'allocation' });
    expect(usage).toEqual(await allocated());
    expect(asked).toBeGreaterThan(1);
  });

  test.each([
    ['a cluster without accounting', NO_ACCOUNTING],
    ['slurmdbd down', DBD_UNREACHABLE],
  ])('%s: the allocation at once, sacct asked once', async (_case, reply) => {
    const { usage, asked } = await usageWith([reply]);
    expect(usage).toEqual(await allocated());
    expect(usage?.gpuSeconds).toBe(usage?.cpuSeconds);
    expect(asked).toBe(1);
  });

  test('a cancelled run waits for no record', async () => {
    const { usage, asked } = await usageWith([stillRunning], { signal: AbortSignal.abort() });
    expect(usage).toEqual(await allocated());
    expect(asked).toBe(1);
  });
});
