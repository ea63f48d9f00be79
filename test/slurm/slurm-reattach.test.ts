import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { firstLine, jobFields, startSlurm, waitFor } from './slurm-job.js';

let dir: string;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-reattach-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a launch for a stage whose attach process died re-attaches to its job instead of submitting again', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const cmd = 'echo "job $SLURM_JOB_ID" && sleep 3 && echo done';
  const stage = { name: 'train', jobKey: 'k1', resources: { cpus: 1 } };
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  // The first attach process, killed hard (as a runner killed with -9 takes it) once the job is queued.
  const first = launcher.launch(cmd, dir, [], stage);
  const child = spawn(first.file, first.args, { cwd: dir, env, stdio: 'ignore' });
  const jobFile = join(dir, 'jobs', 'k1-train.job');
  let job = '';
  await waitFor('the job id to be kept', async () => (job = await firstLine(jobFile)) !== '');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  // The engine asks first, so as not to remove the outs the job is writing.
  expect(launcher.reattaches(stage)).toBe(true);

  const lines: string[] = [];
  const result = await runStageProcess({
    cmd,
    cwd: dir,
    env,
    timeoutMs: 60_000,
    launcher,
    stage,
    onLine: (_stream, line) => lines.push(line),
  });
  expect(result.exitCode).toBe(0);
  expect(lines).toEqual(
    expect.arrayContaining([`fluksio: re-attached to Slurm job ${job}`, `job ${job}`, 'done']),
  );
  expect(lines.some((line) => line.startsWith('fluksio: submitted'))).toBe(false);
  expect((await jobFields(job)).JobState).toBe('COMPLETED');
  // Finished, the job's id is no longer kept: the next launch of the stage submits anew.
  expect(await readdir(join(dir, 'jobs'))).not.toContain('k1-train.job');
  expect(launcher.reattaches(stage)).toBe(false);
}, 60_000);
