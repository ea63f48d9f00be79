import type { Server } from 'node:http';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { expect, test } from 'vitest';
import { stages as stageRows } from '../../schemas/tables/stages.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { registerAcmeRunner, waitFor, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { startEventHoldingFront } from './event-holding-front.js';
import { finishedRun, serveSlurmRepo, useSlurmGitHubWorld } from './slurm-github-world.js';
import { firstLine } from './slurm-job.js';

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;
let front: Server | undefined;

useSlurmGitHubWorld(() => {
  const left = { runner, front, world, repo, scratch };
  runner = front = world = repo = scratch = undefined;
  return left;
});

test('a Slurm runner killed with -9 after a stage’s job ended but before the stage’s end reached the control plane: the restarted runner sends that end and keeps the stage, never running its job again', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-unsent-'));
  const prepareJobs = `${scratch}/prepare-jobs`;
  const trainJobs = `${scratch}/train-jobs`;
  const prepareGo = `${scratch}/prepare-go`;
  const trainGo = `${scratch}/train-go`;
  const served = await serveSlurmRepo(`version: 1
on:
  push: { branches: [main] }
metrics:
  rows: { goal: max }
stages:
  prepare:
    cmd: >-
      echo $SLURM_JOB_ID >> ${prepareJobs} &&
      until [ -e ${prepareGo} ]; do sleep 0.2; done &&
      echo "preparing in job $SLURM_JOB_ID" && echo data > data.txt && echo '{"rows": 7}' > rows.json
    outs: [data.txt]
    metrics: [rows.json]
  train:
    cmd: >-
      echo $SLURM_JOB_ID >> ${trainJobs} &&
      until [ -e ${trainGo} ]; do sleep 0.2; done &&
      cat data.txt > model.txt
    deps: [data.txt]
    outs: [model.txt]
`);
  ({ repo, world } = served);
  const current = served.world;
  const token = await registerAcmeRunner(current, []);
  const holding = { events: false };
  const started = await startEventHoldingFront(current.plane.url, holding);
  front = started.server;
  const { url } = started;
  const start = (workDir?: string) =>
    startRunnerProcess({
      url,
      token,
      args: ['--backend', 'slurm'],
      ...(workDir ? { workDir } : {}),
      env: { GIT_SSL_CAINFO: current.double.caFile ?? '' },
    });
  const first = await start();
  runner = first;
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: served.main }));
  let prepareJob = '';
  await waitFor(
    'prepare’s job to run',
    async () => (prepareJob = await firstLine(prepareJobs)) !== '',
    60_000,
  );
  const [queued] = await current.runs();
  const runId = queued?.id ?? '';
  const prepareRow = async () =>
    (
      await current.db
        .select()
        .from(stageRows)
        .where(and(eq(stageRows.runId, runId), eq(stageRows.name, 'prepare')))
    )[0];
  await waitFor(
    'prepare’s start to be stored',
    async () => (await prepareRow())?.status === 'running',
    60_000,
  );

  // The control plane takes no events from here: prepare's job ends, its out is stored as a
  // blob, train's job starts, and prepare's end waits in the runner, which is then killed.
  holding.events = true;
  await writeFile(prepareGo, '');
  await waitFor('train’s job to run', async () => (await firstLine(trainJobs)) !== '', 60_000);
  expect((await prepareRow())?.status).toBe('running');
  await first.stop('SIGKILL');
  holding.events = false;

  runner = await start(first.workDir);
  await runner.waitFor(/"msg":"resumed the run in attempt 1/, 60_000);
  await writeFile(trainGo, '');
  const run = await finishedRun(current, (candidate) => candidate.id === runId, runner);
  expect(run, runner.output()).toMatchObject({ status: 'succeeded', attempt: 1, leaseEpoch: 1 });
  // prepare's job ran once: its end, unsent when the runner died, was sent by the next.
  expect((await readFile(prepareJobs, 'utf8')).trim().split('\n')).toEqual([prepareJob]);
  expect(await prepareRow()).toMatchObject({ status: 'ran', usage: { job: prepareJob } });
  // Its log, held in the runner when it died, arrived whole and once.
  expect(await getStageLog({ db: current.db, runId, stage: 'prepare' })).toEqual([
    `fluksio: submitted Slurm job ${prepareJob}`,
    `fluksio: Slurm job ${prepareJob} running on ${hostname()}`,
    `preparing in job ${prepareJob}`,
  ]);
  expect(run.metrics).toMatchObject({ rows: 7 });
  // Every event once: the attempt's seqs without a gap or a repeat.
  const applied = await current.db
    .select({ seq: appliedEvents.seq })
    .from(appliedEvents)
    .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, 1)))
    .orderBy(asc(appliedEvents.seq));
  expect(applied.map((row) => row.seq)).toEqual(applied.map((_, index) => index));
  // Over, the run's journal is gone from the work directory.
  await waitFor(
    'the run’s event journal to be removed',
    async () => (await readdir(join(first.workDir, 'event-journal'))).length === 0,
    30_000,
  );
}, 240_000);
