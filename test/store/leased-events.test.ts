import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunEvent } from '../../schemas/run-event.js';
import { logLines } from '../../schemas/tables/log-lines.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import { applyLeasedEvents } from '../../store/events/apply-leased-events.js';
import { applyRunEvents } from '../../store/events/apply-run-events.js';
import type { Database } from '../../store/db/database.js';
import { findCacheEntry } from '../../store/cache/find-cache-entry.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { releaseLeasedRun } from '../../store/leases/release-leased-run.js';
import { startLeasedRun } from '../../store/leases/start-leased-run.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { claim, queueRun, registerRunner, startedRun, uniqueOwner } from './control-plane-fixtures.js';
import { makeStageRecord } from './store-fixtures.js';

/** A stage's whole life as a runner reports it, numbered from `firstSeq`. */
function trainEvents(firstSeq = 0, stage = makeStageRecord({ name: 'train' })): RunEvent[] {
  const bodies = [
    { type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
    { type: 'stage.log', stage: 'train', lines: ['epoch 1', 'epoch 2'] },
    { type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 0, value: 1 }] },
    {
      type: 'annotation',
      annotation: {
        stage: 'train',
        path: 'train.py',
        line: 3,
        level: 'warning',
        message: 'slow',
        title: null,
      },
    },
    { type: 'stage.log', stage: 'train', lines: ['done'] },
    { type: 'stage.finished', stage },
  ] as const;
  return bodies.map((body, index) => ({ ...body, seq: firstSeq + index }) as RunEvent);
}

describe.each(databaseBackends)('leased run events on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function ownRunner(): Promise<{ runner: RunnerRow; repository: string }> {
    const owner = uniqueOwner();
    return { runner: await registerRunner(db, { owner }), repository: `${owner}/train` };
  }

  async function annotationCount(runId: string): Promise<number> {
    return (await getRunDetail({ db, runId }))?.annotations.length ?? -1;
  }

  test('a batch sent twice is applied once, and acknowledged both times', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const batch = { db, runId: run.id, leaseId: run.leaseId, attempt: 1, events: trainEvents() };
    expect(await applyLeasedEvents(batch)).toEqual({ applied: 6, acked: 6 });
    expect(await applyLeasedEvents(batch)).toEqual({ applied: 0, acked: 6 });
    expect(await annotationCount(run.id)).toBe(1);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2', 'done']);
  });

  test('two overlapping batches racing apply each event once, in seq order', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const events = trainEvents();
    const send = (slice: RunEvent[]) =>
      applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events: slice });
    const [head, whole, tail] = await Promise.all([
      send(events.slice(0, 4)),
      send(events),
      send(events.slice(2)),
    ]);
    expect(head?.acked).toBe(4);
    expect(whole?.acked).toBe(6);
    // The tail is acknowledged only if it came after the events before it.
    expect([0, 4]).toContain(tail?.acked);
    expect((head?.applied ?? 0) + (whole?.applied ?? 0) + (tail?.applied ?? 0)).toBe(6);
    expect(await annotationCount(run.id)).toBe(1);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2', 'done']);
    expect((await getRunDetail({ db, runId: run.id }))?.stages).toEqual([makeStageRecord({ name: 'train' })]);
  });

  test('an event that overtook an earlier one waits for it, unacknowledged', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const events = trainEvents();
    const send = (slice: RunEvent[]) =>
      applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events: slice });
    expect(await send(events.slice(2))).toEqual({ applied: 0, acked: 0 });
    expect(await getRunDetail({ db, runId: run.id })).toMatchObject({ stages: [], annotations: [] });
    expect(await send(events.slice(0, 2))).toEqual({ applied: 2, acked: 2 });
    expect(await send(events.slice(2))).toEqual({ applied: 4, acked: 4 });
    expect((await getRunDetail({ db, runId: run.id }))?.stages).toEqual([makeStageRecord({ name: 'train' })]);
  });

  test("a finished stage writes its cache entry in the run's own repository and trust domain", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository, trustDomain: 'pr:7' });
    const stage = makeStageRecord({ name: 'train' });
    await applyLeasedEvents({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      attempt: 1,
      events: trainEvents(0, stage),
    });
    const find = (trustDomains: string[]) =>
      findCacheEntry({ db, repository, trustDomains, key: stage.cacheKey ?? '' });
    expect(await find(['trusted'])).toBeNull();
    expect((await find(['trusted', 'pr:7']))?.runId).toBe(run.id);
  });

  test('events of a run not started yet, or of another attempt, change nothing', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    const claimed = await claim(db, runner);
    const leaseId = claimed?.leaseId ?? '';
    const batch = { db, runId: queued.id, leaseId, attempt: 1, events: trainEvents() };
    expect(await applyLeasedEvents(batch)).toBeNull();
    await startLeasedRun({
      db,
      runId: queued.id,
      leaseId,
      codeDigest: 'a'.repeat(64),
      envDigest: 'b'.repeat(64),
      params: claimed?.params ?? {},
      paramsDigest: claimed?.paramsDigest ?? '',
    });
    expect(await applyLeasedEvents({ ...batch, attempt: 2 })).toBeNull();
    expect(await getRunDetail({ db, runId: queued.id })).toMatchObject({ stages: [], annotations: [] });
    expect(await applyLeasedEvents(batch)).toEqual({ applied: 6, acked: 6 });
  });

  test("a new attempt starts from a clean record, and the log shown is the latest attempt's", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const first = trainEvents().slice(0, 4);
    await applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events: first });
    await releaseLeasedRun({ db, runId: run.id, leaseId: run.leaseId, reason: 'SIGTERM' });

    const again = await claim(db, runner);
    const leaseId = again?.leaseId ?? '';
    expect(again?.attempt).toBe(2);
    // Until the new attempt starts, the record of the last one is what there is to show.
    expect(await annotationCount(run.id)).toBe(1);
    await startLeasedRun({
      db,
      runId: run.id,
      leaseId,
      codeDigest: 'a'.repeat(64),
      envDigest: 'b'.repeat(64),
      params: again?.params ?? {},
      paramsDigest: again?.paramsDigest ?? '',
    });
    expect(await getRunDetail({ db, runId: run.id })).toMatchObject({
      stages: [],
      annotations: [],
      series: {},
    });
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2']);

    // The same seqs again, under the new attempt, are new events.
    const second = trainEvents();
    expect(await applyLeasedEvents({ db, runId: run.id, leaseId, attempt: 2, events: second })).toEqual({
      applied: 6,
      acked: 6,
    });
    expect(await annotationCount(run.id)).toBe(1);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2', 'done']);
  });

  test('a stage re-attached to its job in the same attempt (its runner resumed the run) shows only the lines and annotations reported since, each once', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const send = (events: RunEvent[]) =>
      applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events });
    // The first runner read the job's output up to its annotation, then died.
    await send(trainEvents().slice(0, 4));
    expect(await annotationCount(run.id)).toBe(1);
    // The resumed runner re-attaches at seq 4 and reads the job's output from its start,
    // its annotation included.
    const [, , , annotation] = trainEvents(4);
    await send([
      { seq: 4, type: 'stage.started', stage: 'train', at: '2025-01-02T03:09:00.000Z', reattached: true },
      { seq: 5, type: 'stage.log', stage: 'train', lines: ['epoch 1'] },
      { ...(annotation as RunEvent), seq: 6 },
    ]);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1']);
    expect(await annotationCount(run.id)).toBe(1);
    await send([{ seq: 7, type: 'stage.log', stage: 'train', lines: ['epoch 2', 'done'] }]);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2', 'done']);
  });

  test("a re-attach in the batch that carries the stage's earlier annotation drops it too", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const [started, log, , annotation] = trainEvents();
    await applyLeasedEvents({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      attempt: 1,
      events: [
        started as RunEvent,
        log as RunEvent,
        { ...(annotation as RunEvent), seq: 2 },
        { seq: 3, type: 'stage.started', stage: 'train', at: '2025-01-02T03:09:00.000Z', reattached: true },
        { ...(annotation as RunEvent), seq: 4 },
      ],
    });
    expect(await annotationCount(run.id)).toBe(1);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([]);
  });

  test("a re-attached stage's series holds only the points reported since: a pass run anew that reaches fewer steps leaves none of the old", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const send = (events: RunEvent[]) =>
      applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events });
    const loss = (seq: number, steps: [number, number][]): RunEvent => ({
      seq,
      type: 'metric.points',
      points: steps.map(([step, value]) => ({ stage: 'train', name: 'loss', step, value })),
    });
    await send([
      { seq: 0, type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.000Z' },
      loss(1, [
        [0, 1],
        [1, 0.9],
        [2, 0.8],
      ]),
    ]);
    // The resumed runner found no job to re-attach to and ran the stage anew; in the same
    // batch, a point the first pass reported late (before the start) is not kept either.
    await send([
      loss(2, [[3, 0.7]]),
      { seq: 3, type: 'stage.started', stage: 'train', at: '2025-01-02T03:09:00.000Z', reattached: true },
      loss(4, [
        [0, 2],
        [1, 1.5],
      ]),
    ]);
    const stored = await db
      .select({ step: metricPoints.step, value: metricPoints.value })
      .from(metricPoints)
      .where(eq(metricPoints.runId, run.id))
      .orderBy(metricPoints.step);
    expect(stored).toEqual([
      { step: 0, value: 2 },
      { step: 1, value: 1.5 },
    ]);
  });

  test('a stage started again without re-attaching keeps the lines and annotations it reported earlier in the attempt', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const send = (events: RunEvent[]) =>
      applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: 1, events });
    await send(trainEvents().slice(0, 4));
    await send([
      { seq: 4, type: 'stage.started', stage: 'train', at: '2025-01-02T03:09:00.000Z' },
      { seq: 5, type: 'stage.log', stage: 'train', lines: ['again'] },
    ]);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(['epoch 1', 'epoch 2', 'again']);
    expect(await annotationCount(run.id)).toBe(1);
  });

  test("a stage's log is kept up to maxStageLogBytes a stage, and counted anew when the stage re-attaches", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const send = (events: RunEvent[]) =>
      applyLeasedEvents({
        db,
        runId: run.id,
        leaseId: run.leaseId,
        attempt: 1,
        events,
        maxStageLogBytes: 25,
      });
    const cut = expect.stringMatching(/^fluksio: this stage's log passed the 25 B the control plane keeps/);
    await send([
      { seq: 0, type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
      { seq: 1, type: 'stage.log', stage: 'train', lines: ['epoch 1', 'epoch 2', 'epoch 3', 'epoch 4'] },
    ]);
    await send([{ seq: 2, type: 'stage.log', stage: 'train', lines: ['epoch 5'] }]);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([
      'epoch 1',
      'epoch 2',
      'epoch 3',
      cut,
    ]);

    // Its job's output is read again from the start: the lines before are gone, and so is their count.
    await send([
      { seq: 3, type: 'stage.started', stage: 'train', at: '2025-01-02T03:09:00.000Z', reattached: true },
      { seq: 4, type: 'stage.log', stage: 'train', lines: ['epoch 1', 'epoch 2', 'epoch 3'] },
    ]);
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([
      'epoch 1',
      'epoch 2',
      'epoch 3',
    ]);
  });

  test("a progress bar's states (lines ended by \\r) count their bytes as the log holds them, without a newline", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    // 24 bytes as logText writes them, what the runner's log_limit counted.
    const bar = ['epoch 1\r', 'epoch 2\r', 'epoch 3\r'];
    await applyLeasedEvents({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      attempt: 1,
      events: [
        { seq: 0, type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
        { seq: 1, type: 'stage.log', stage: 'train', lines: bar },
      ],
      maxStageLogBytes: 24,
    });
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual(bar);
  });

  test('a stage log is empty for a stage that printed nothing, and null for no such stage', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await applyLeasedEvents({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      attempt: 1,
      events: [{ seq: 0, type: 'stage.started', stage: 'prepare', at: '2025-01-02T03:04:05.678Z' }],
    });
    expect(await getStageLog({ db, runId: run.id, stage: 'prepare' })).toEqual([]);
    expect(await getStageLog({ db, runId: run.id, stage: 'evaluate' })).toBeNull();
    expect(await getStageLog({ db, runId: 'NO-SUCH-RUN', stage: 'prepare' })).toBeNull();
  });

  test('the local store keeps ignoring stage logs', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await applyRunEvents({
      db,
      runId: run.id,
      repository,
      trustDomain: 'trusted',
      events: [
        { type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
        { type: 'stage.log', stage: 'train', lines: ['epoch 1'] },
      ],
    });
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([]);
    const [rows] = await db.select({ count: count() }).from(logLines).where(eq(logLines.runId, run.id));
    expect(rows?.count).toBe(0);
  });
});
