import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { readEventJournal } from '../../runner/daemon/read-event-journal.js';
import { RemoteEventSink } from '../../runner/daemon/remote-event-sink.js';
import type { RunEvent } from '../../schemas/run-event.js';
import { emptyStageRecord } from '../../schemas/stage-record.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { stages } from '../../schemas/tables/stages.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

const DIGEST = 'd'.repeat(64);
const LINES = 40;
const CHILD = fileURLToPath(new URL('./helpers/emit-then-killed.ts', import.meta.url));

let database: TestDatabase;
let plane: TestControlPlane;
let scratch: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
  scratch = await mkdtemp(path.join(tmpdir(), 'fluksio-merged-killed-'));
});
afterEach(async () => {
  const closed = plane.close();
  plane.server.server.closeAllConnections();
  await closed;
  await rm(scratch, { recursive: true, force: true });
});

const range = (count: number) => Array.from({ length: count }, (_, index) => index);
const linesOf = (events: readonly RunEvent[], stage: string) =>
  events.flatMap((event) => (event.type === 'stage.log' && event.stage === stage ? event.lines : []));
const pointsOf = (events: readonly RunEvent[], stage: string) =>
  events.flatMap((event) =>
    event.type === 'metric.points'
      ? event.points.filter((point) => point.stage === stage).map((point) => [point.step, point.value])
      : [],
  );

test('a runner killed with -9 while RemoteEventSink merges lines and points leaves in its journal every line and point of a stage it ended, before that end; what it loses is only the merged output of a stage with no end, which a resume reads again', async () => {
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const { token } = await plane.addRunner({ name: 'gpu-box' });
  expect((await plane.submit(submitter, {})).status).toBe(201);
  const client = new ControlPlaneClient({ url: plane.url, token });
  const claim = await client.claim(0, false);
  if (!claim) throw new Error('nothing to claim');
  const run = { runId: claim.run.id, lease: claim.lease };
  await client.start(run, { codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) });

  // A process of its own, killed with -9 in the tick that emitted prepare's end and train's
  // lines: nothing after its first event reached the control plane.
  const journal = path.join(scratch, `${run.runId}.1.jsonl`);
  const setup = {
    url: plane.url,
    token,
    ...run,
    journal,
    spool: path.join(scratch, 'spool.jsonl'),
    lines: LINES,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(setup)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const signal = await new Promise((resolve) => child.once('exit', (_code, killed) => resolve(killed)));
  expect(signal).toBe('SIGKILL');

  const reply = await client.resume(run);
  expect(reply).toMatchObject({ started: true, nextSeq: 1, finished: [] });
  const unsent = await readEventJournal(journal, reply.nextSeq, (error) => {
    throw error;
  });
  // prepare's lines and points were merged, and numbered and journaled before its end.
  const end = unsent.findIndex((event) => event.type === 'stage.finished');
  expect(unsent[end]).toMatchObject({ stage: { name: 'prepare', status: 'ran' } });
  expect(linesOf(unsent.slice(0, end), 'prepare')).toEqual(range(LINES).map((i) => `prepare line ${i}`));
  expect(pointsOf(unsent.slice(0, end), 'prepare')).toEqual(range(LINES).map((i) => [i, i]));
  // In fewer events than lines and points: merged, not journaled one by one.
  expect(end).toBeLessThan(2 * LINES);
  expect(linesOf(unsent.slice(end), 'prepare')).toEqual([]);
  expect(pointsOf(unsent.slice(end), 'prepare')).toEqual([]);
  // train's start and point are journaled (its lines handed the point on); its lines, still
  // being merged, died with the process: train has no end, so the resume executes it
  // again or re-attaches to its job, and they come again.
  expect(unsent.slice(end + 1).map((event) => event.type)).toEqual(['stage.started', 'metric.points']);
  expect(linesOf(unsent, 'train')).toEqual([]);

  // The resumed runner sends the journal's events first, then train's, read again.
  const resumed = new RemoteEventSink({
    client,
    run: { ...run, epoch: reply.epoch },
    attempt: 1,
    firstSeq: reply.nextSeq,
    unsent,
    journal: { file: journal },
  });
  resumed.emit({ type: 'stage.started', stage: 'train', at: new Date().toISOString(), reattached: true });
  for (const i of range(LINES))
    resumed.emit({ type: 'stage.log', stage: 'train', lines: [`train line ${i}`] });
  resumed.emit({ type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 0, value: 1 }] });
  resumed.emit({ type: 'stage.finished', stage: emptyStageRecord('train', 'ran') });
  await resumed.flush();
  resumed.close();

  expect(await getStageLog({ db: database.db, runId: run.runId, stage: 'prepare' })).toEqual(
    range(LINES).map((i) => `prepare line ${i}`),
  );
  expect(await getStageLog({ db: database.db, runId: run.runId, stage: 'train' })).toEqual(
    range(LINES).map((i) => `train line ${i}`),
  );
  const points = await database.db
    .select({ stage: metricPoints.stage, step: metricPoints.step, value: metricPoints.value })
    .from(metricPoints)
    .where(eq(metricPoints.runId, run.runId))
    .orderBy(asc(metricPoints.stage), asc(metricPoints.step));
  expect(points).toEqual([
    ...range(LINES).map((i) => ({ stage: 'prepare', step: i, value: i })),
    { stage: 'train', step: 0, value: 1 },
  ]);
  const rows = await database.db
    .select({ name: stages.name, status: stages.status })
    .from(stages)
    .where(eq(stages.runId, run.runId))
    .orderBy(asc(stages.position));
  expect(rows).toEqual([
    { name: 'prepare', status: 'ran' },
    { name: 'train', status: 'ran' },
  ]);
  const applied = await database.db
    .select({ seq: appliedEvents.seq })
    .from(appliedEvents)
    .where(and(eq(appliedEvents.runId, run.runId), eq(appliedEvents.attempt, 1)))
    .orderBy(asc(appliedEvents.seq));
  expect(applied.map((row) => row.seq)).toEqual(applied.map((_, index) => index));
});
