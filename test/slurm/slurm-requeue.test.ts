import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli } from '../helpers/run-cli.js';
import { firstLine, inQueue, jobFields, startSlurm, waitFor } from './slurm-job.js';

const run = promisify(execFile);

let repo: TestRepo;
beforeAll(startSlurm, 120_000);
afterEach(async () => {
  await repo?.cleanup();
});

// On a laptop (`fluksio run`) there is no queue to give the run back to: the stage ends with
// the cause named. Through a runner, the run goes back for a retry (slurm-github.test.ts).
test('a job requeued mid-run ends its stage with the cause named, and leaves no job behind', async () => {
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
  const running = runCli(['run', '--json', '--backend', 'slurm'], { cwd: repo.dir });
  let job = '';
  await waitFor('the job to run', async () => (job = await firstLine(join(repo.dir, 'job.txt'))) !== '');
  await run('scontrol', ['requeue', job]);
  const result = await running;
  const report = JSON.parse(result.stdout) as {
    stages: { name: string; status: string; error: string | null }[];
  };
  expect(report.stages[0]).toMatchObject({ status: 'failed', error: 'Slurm requeued the job' });
  await waitFor('the requeued job to leave the queue', async () => !(await inQueue(job)), 10_000);
  expect(Number((await jobFields(job)).Restarts)).toBeGreaterThan(0);
}, 60_000);
