import type { Server } from 'node:http';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { eventJournalFile } from '../../runner/daemon/event-journal-dir.js';
import { readEventJournal } from '../../runner/daemon/read-event-journal.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
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

const range = (count: number) => Array.from({ length: count }, (_, index) => index);

test('a Slurm runner killed with -9 while it merges a stage’s log lines and metric points: every line and point of the stage that ended, and of the stage re-attached to, is stored once, in order, and the finished stage’s job never runs again', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-merged-'));
  const prepareJobs = `${scratch}/prepare-jobs`;
  const trainJobs = `${scratch}/train-jobs`;
  const prepareGo = `${scratch}/prepare-go`;
  const trainGo = `${scratch}/train-go`;
  const trainCount = `${scratch}/train-count`;
  const PREPARED = 300;
  // prepare prints its lines and points in a burst once let go, and ends: RemoteEventSink
  // merges them into a few events. train streams a line and a point every 20 ms until let
  // go, so a merged event of its is pending whenever its output is read.
  const served = await serveSlurmRepo(`version: 1
on:
  push: { branches: [main] }
metrics:
  rows: { goal: max }
  seen: { goal: max }
  loss: { goal: min }
stages:
  prepare:
    cmd: >-
      echo $SLURM_JOB_ID >> ${prepareJobs} &&
      until [ -e ${prepareGo} ] || [ ! -d ${scratch} ]; do sleep 0.2; done &&
      for i in $(seq 0 ${PREPARED - 1}); do echo "prepare line $i"; echo "::metric name=seen::$i"; done &&
      echo data > data.txt && echo '{"rows": ${PREPARED}}' > rows.json
    outs: [data.txt]
    metrics: [rows.json]
  train:
    cmd: >-
      echo $SLURM_JOB_ID >> ${trainJobs} &&
      i=0 &&
      until [ -e ${trainGo} ] || [ ! -d ${scratch} ]; do echo "train line $i"; echo "::metric name=loss::$i"; i=$((i + 1)); echo $i > ${trainCount}; sleep 0.02; done &&
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
  const stageRow = async (name: string) =>
    (
      await current.db
        .select()
        .from(stageRows)
        .where(and(eq(stageRows.runId, runId), eq(stageRows.name, name)))
    )[0];
  await waitFor(
    'prepare’s start to be stored',
    async () => (await stageRow('prepare'))?.status === 'running',
    60_000,
  );

  // From here the control plane takes no events: prepare's burst and end, and train's
  // stream, wait in the runner (and its journal) when it is killed mid-stream.
  holding.events = true;
  await writeFile(prepareGo, '');
  const journal = eventJournalFile(join(first.workDir, 'event-journal'), runId, 1);
  await waitFor(
    'prepare’s end to be journaled',
    async () => (await readFile(journal, 'utf8').catch(() => '')).includes('"type":"stage.finished"'),
    60_000,
  );
  await waitFor(
    'train’s job to have streamed for a while',
    async () => Number((await readFile(trainCount, 'utf8').catch(() => '0')).trim()) >= 40,
    60_000,
  );
  await first.stop('SIGKILL');
  expect((await stageRow('prepare'))?.status).toBe('running');
  // The journal holds the events past those the control plane stored (it is emptied once all are).
  const nextSeq = (
    await current.db
      .select({ seq: appliedEvents.seq })
      .from(appliedEvents)
      .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, 1)))
  ).length;

  // What the killed runner left, checked last: the results stored are what matters most.
  const left = await readEventJournal(journal, nextSeq, () => undefined);

  holding.events = false;
  runner = await start(first.workDir);
  await runner.waitFor(/"msg":"resumed the run in attempt 1/, 60_000);
  await waitFor(
    'train to re-attach to its job',
    async () =>
      ((await getStageLog({ db: current.db, runId, stage: 'train' })) ?? []).some((line) =>
        line.startsWith('fluksio: re-attached to Slurm job'),
      ),
    60_000,
  );
  await writeFile(trainGo, '');
  const run = await finishedRun(current, (candidate) => candidate.id === runId, runner);
  expect(run, runner.output()).toMatchObject({ status: 'succeeded', attempt: 1, leaseEpoch: 1 });
  const streamed = Number((await readFile(trainCount, 'utf8')).trim());
  expect(streamed).toBeGreaterThan(3);

  // prepare's job ran once: its end, kept from the journal, was not run again.
  expect((await readFile(prepareJobs, 'utf8')).trim().split('\n')).toEqual([prepareJob]);
  expect((await readFile(trainJobs, 'utf8')).trim().split('\n')).toHaveLength(1);
  expect(await stageRow('prepare')).toMatchObject({
    status: 'ran',
    metrics: { rows: PREPARED, seen: PREPARED - 1 },
  });
  expect(await stageRow('train')).toMatchObject({ status: 'ran', metrics: { loss: streamed - 1 } });
  expect(run.metrics).toMatchObject({ rows: PREPARED, seen: PREPARED - 1, loss: streamed - 1 });

  // Each stage's lines once, in the order printed; none lost at the kill.
  const linesOf = async (stage: string) =>
    ((await getStageLog({ db: current.db, runId, stage })) ?? []).filter((line) =>
      line.startsWith(`${stage} line`),
    );
  expect(await linesOf('prepare')).toEqual(range(PREPARED).map((i) => `prepare line ${i}`));
  expect(await linesOf('train')).toEqual(range(streamed).map((i) => `train line ${i}`));

  // Each stage's series whole: every step the job printed, with its value, and no other.
  const points = await current.db
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      step: metricPoints.step,
      value: metricPoints.value,
    })
    .from(metricPoints)
    .where(eq(metricPoints.runId, runId))
    .orderBy(asc(metricPoints.stage), asc(metricPoints.step));
  expect(points.filter((point) => point.stage === 'prepare')).toEqual(
    range(PREPARED).map((i) => ({ stage: 'prepare', name: 'seen', step: i, value: i })),
  );
  expect(points.filter((point) => point.stage === 'train')).toEqual(
    range(streamed).map((i) => ({ stage: 'train', name: 'loss', step: i, value: i })),
  );

  // Every event once: the attempt's seqs without a gap or a repeat.
  const applied = await current.db
    .select({ seq: appliedEvents.seq })
    .from(appliedEvents)
    .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, 1)))
    .orderBy(asc(appliedEvents.seq));
  expect(applied.map((row) => row.seq)).toEqual(applied.map((_, index) => index));

  // What the killed runner left: prepare's lines and points, each numbered before its end.
  const prepareEnd = left.findIndex((event) => event.type === 'stage.finished');
  expect(left[prepareEnd]).toMatchObject({ stage: { name: 'prepare', status: 'ran' } });
  const before = left.slice(0, prepareEnd);
  expect(
    before.flatMap((event) =>
      event.type === 'stage.log' && event.stage === 'prepare'
        ? event.lines.filter((line) => line.startsWith('prepare line'))
        : [],
    ),
  ).toEqual(range(PREPARED).map((i) => `prepare line ${i}`));
  expect(
    before
      .flatMap((event) =>
        event.type === 'metric.points' ? event.points.filter((point) => point.stage === 'prepare') : [],
      )
      .map((point) => [point.step, point.value]),
  ).toEqual(range(PREPARED).map((i) => [i, i]));
  expect(
    left
      .slice(prepareEnd + 1)
      .some(
        (event) => event.type === 'metric.points' && event.points.some((point) => point.stage === 'prepare'),
      ),
  ).toBe(false);
}, 240_000);
