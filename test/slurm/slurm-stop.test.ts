import { join } from 'node:path';
import { afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf } from '../helpers/run-cli.js';
import { firstLine, inQueue, jobFields, startSlurm, waitFor } from './slurm-job.js';

let repo: TestRepo;
beforeAll(startSlurm, 120_000);
afterEach(async () => {
  await repo?.cleanup();
});

test('aborting a local fluksio run cancels its Slurm job: CANCELLED within 5 s, then out of the queue, the run cancelled', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  long:
    cmd: echo $SLURM_JOB_ID > job.txt && sleep 300
    outs: [never.txt]
`,
    },
  });
  const abort = new AbortController();
  const running = runCli(['run', '--json', '--backend', 'slurm'], { cwd: repo.dir, signal: abort.signal });
  let job = '';
  await waitFor('the job to run', async () => (job = await firstLine(join(repo.dir, 'job.txt'))) !== '');
  expect(await inQueue(job)).toBe(true);
  const cancelledAt = Date.now();
  abort.abort();
  // Cancel reaches the job within 5 s; leaving the queue then waits for slurmd's clean-up
  // (KillWait, completing), which a loaded machine may stretch.
  await waitFor(
    'the job to be cancelled',
    async () => (await jobFields(job)).JobState === 'CANCELLED',
    5_000,
  );
  expect(Date.now() - cancelledAt).toBeLessThan(5_000);
  await waitFor('the job to leave the queue', async () => !(await inQueue(job)), 30_000);
  expect((await jobFields(job)).JobState).toBe('CANCELLED');
  const result = await running;
  const report = JSON.parse(result.stdout) as { run: { status: string } };
  expect(report.run.status).toBe('cancelled');
}, 60_000);

test('a job Slurm ends past its time limit fails the stage with the cause named', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  slow:
    cmd: echo $SLURM_JOB_ID > job.txt && sleep 300
    outs: [never.txt]
    resources: {time: 1m}
`,
    },
  });
  // Slurm counts time limits in minutes and checks them every 30 s: this takes 60–95 s.
  const { report } = await runJson(['--backend', 'slurm'], { cwd: repo.dir });
  const job = await firstLine(join(repo.dir, 'job.txt'));
  expect((await jobFields(job)).JobState).toBe('TIMEOUT');
  expect(report.run.status).toBe('failed');
  expect(stageOf(report, 'slow').error).toBe('Slurm ended the job: TIMEOUT (it ran past its time limit)');
  expect(report.run.reason).toMatch(/Stage slow failed: Slurm ended the job: TIMEOUT/);
}, 150_000);
