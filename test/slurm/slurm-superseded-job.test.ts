import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import type { LaunchedStage } from '../../runner/sandbox/stage-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { fakeCommand, realCommand, UNREACHABLE } from './fake-slurm.js';
import { inQueue, jobFields, startSlurm, submitJob } from './slurm-job.js';

const run = promisify(execFile);

let dir: string;
let old = '';
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-superseded-'));
});
afterEach(async () => {
  if (old !== '') await run('scancel', [old]).catch(() => undefined);
  old = '';
  await rm(dir, { recursive: true, force: true });
});

test('a launch in a resumed attempt cancels and waits out the live job of its run’s stage it does not re-attach to; a launch outside one, or of another stage, leaves it', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  old = await submitJob('sleep 60', ['--comment=fluksio:r1:train:0123456789abcdef', '--cpus-per-task=1']);
  const launch = async (stage: LaunchedStage) => {
    const lines: string[] = [];
    const result = await runStageProcess({
      cmd: 'echo "ran in job $SLURM_JOB_ID"',
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 60_000,
      launcher,
      stage,
      onLine: (_stream, line) => lines.push(line),
    });
    expect(result.exitCode, lines.join('\n')).toBe(0);
    return lines;
  };
  const resources = { cpus: 1 };
  // Not resumed (a first attempt's launch), or a run without an id (a local run), or another stage.
  for (const stage of [
    { name: 'train', jobKey: 'k1', resources, runId: 'r1' },
    { name: 'train', jobKey: 'k2', resources, resumed: true },
    { name: 'trai', jobKey: 'k3', resources, runId: 'r1', resumed: true },
  ]) {
    const lines = await launch(stage);
    expect(lines.filter((line) => line.includes('cancelling'))).toEqual([]);
    expect(await inQueue(old)).toBe(true);
  }
  const lines = await launch({ name: 'train', jobKey: 'k4', resources, runId: 'r1', resumed: true });
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(
        new RegExp(
          `^fluksio: cancelling Slurm job ${old} \\(RUNNING, comment fluksio:r1:train:0123456789abcdef\\): `,
        ),
      ),
      `fluksio: cancelled Slurm job ${old}: it is over`,
    ]),
  );
  // Submitted only once the old job was over.
  const submitted = lines.findIndex((line) => line.startsWith('fluksio: submitted Slurm job'));
  expect(submitted).toBeGreaterThan(lines.indexOf(`fluksio: cancelled Slurm job ${old}: it is over`));
  expect((await jobFields(old)).JobState).toBe('CANCELLED');
}, 120_000);

test('squeue failing when a resumed attempt’s launch asks for its stage’s live jobs: asked again, the stage submitted only once the old job is cancelled and over', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  old = await submitJob('sleep 60', ['--comment=fluksio:r2:train:0123456789abcdef', '--cpus-per-task=1']);
  const shims = join(dir, 'shims');
  await mkdir(shims);
  await fakeCommand(shims, 'squeue', [UNREACHABLE, UNREACHABLE, { real: await realCommand('squeue') }]);
  const lines: string[] = [];
  const result = await runStageProcess({
    cmd: 'echo "ran in job $SLURM_JOB_ID"',
    cwd: dir,
    env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    timeoutMs: 60_000,
    launcher,
    stage: { name: 'train', jobKey: 'k1', resources: { cpus: 1 }, runId: 'r2', resumed: true },
    onLine: (_stream, line) => lines.push(line),
  });
  expect(result.exitCode, lines.join('\n')).toBe(0);
  const at = (start: string) => lines.findIndex((line) => line.startsWith(start));
  expect(at('fluksio: squeue failed: asking again for the jobs of this stage')).toBeGreaterThanOrEqual(0);
  expect(at(`fluksio: cancelling Slurm job ${old} (`)).toBeGreaterThan(
    at('fluksio: squeue failed: asking again for the jobs of this stage'),
  );
  expect(at('fluksio: submitted Slurm job')).toBeGreaterThan(
    at(`fluksio: cancelled Slurm job ${old}: it is over`),
  );
  expect((await jobFields(old)).JobState).toBe('CANCELLED');
}, 120_000);
