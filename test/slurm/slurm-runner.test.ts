import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { RunEvent } from '../../schemas/run-event.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { FakeControlPlane } from '../runner-daemon/helpers/fake-control-plane.js';
import { makeClaim } from '../runner-daemon/helpers/make-claim.js';
import { startRunner, type RunnerProcess } from '../runner-daemon/helpers/runner-process.js';
import { jobFields, startSlurm } from './slurm-job.js';

let plane: FakeControlPlane;
let repo: TestRepo;
let workDir: string;
let runner: RunnerProcess | null = null;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-slurm-runner-'));
});
afterEach(async () => {
  await runner?.stop('SIGKILL');
  runner = null;
  await plane.stop();
  await repo?.cleanup();
  await rm(workDir, { recursive: true, force: true });
});

const logLines = (events: RunEvent[]) =>
  events.flatMap((event) => (event.type === 'stage.log' ? event.lines : []));

test('fluksio runner --backend slurm runs a claimed run’s stages as Slurm jobs, live lines and metrics reaching the control plane', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
resources: {cpus: 1, memory: 64MiB}
stages:
  a:
    cmd: echo "job $SLURM_JOB_ID" && echo "::metric name=a_loss::0.5" && echo a > a.txt
    outs: [a.txt]
  b:
    cmd: echo "job $SLURM_JOB_ID" && echo "::metric name=b_loss::0.25" && echo b > b.txt
    outs: [b.txt]
    resources: {gpus: 1, partition: gpu}
`,
      '.gitignore': '*.txt\n',
    },
  });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  runner = startRunner(
    { workDir, backend: 'slurm' },
    { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token },
  );
  const queued = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const done = await plane.waitFor(queued.claim.run.id, (run) => run.finish !== null);
  expect(done.finish, runner.output()).toMatchObject({
    status: 'succeeded',
    metrics: { a_loss: 0.5, b_loss: 0.25 },
  });
  const lines = logLines(plane.eventsOf(queued.claim.run.id));
  const submitted = lines.flatMap((line) => /^fluksio: submitted Slurm job (\d+)$/.exec(line)?.[1] ?? []);
  expect(submitted).toHaveLength(2);
  for (const id of submitted) expect(lines).toContain(`job ${id}`);
  const fields = await Promise.all(submitted.map(jobFields));
  expect(fields.map((each) => each.Partition).sort()).toEqual(['debug', 'gpu']);
  expect(fields.every((each) => each.JobState === 'COMPLETED' && each.MinMemoryNode === '64M')).toBe(true);
}, 60_000);
