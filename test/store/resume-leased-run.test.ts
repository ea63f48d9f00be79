import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunEvent } from '../../schemas/run-event.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../../store/db/database.js';
import { applyLeasedEvents } from '../../store/events/apply-leased-events.js';
import { finishLeasedRun } from '../../store/leases/finish-leased-run.js';
import { heartbeatRun } from '../../store/leases/heartbeat-run.js';
import { releaseLeasedRun } from '../../store/leases/release-leased-run.js';
import { resumeLeasedRun } from '../../store/leases/resume-leased-run.js';
import { sweepRuns } from '../../store/leases/sweep-runs.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { requestCancel } from '../../store/runs/request-cancel.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeStageRecord } from './store-fixtures.js';
import {
  backdate,
  claim,
  newLeaseId,
  queueRun,
  readRun,
  registerRunner,
  startedRun,
  uniqueOwner,
} from './control-plane-fixtures.js';

const LEASE_TTL_MS = 90_000;
const sweepSettings = { onlineWindowMs: 120_000, queueTimeoutMs: 3_600_000 };

/** A stage's log lines as a runner numbers them, from `firstSeq`, each saying who printed it. */
function logEvents(firstSeq: number, count: number, by = 'line'): RunEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    seq: firstSeq + index,
    type: 'stage.log' as const,
    stage: 'train',
    lines: [`${by} ${firstSeq + index}`],
  }));
}

describe.each(databaseBackends)('resuming a held run on $name', ({ open }) => {
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

  function resume(runId: string, leaseId: string, runner: RunnerRow) {
    return resumeLeasedRun({ db, runId, leaseId, runnerName: runner.name, leaseTtlMs: LEASE_TTL_MS });
  }

  test('a run still held under its lease by its runner resumes in the same attempt: the lease renewed, the next seq one past the last applied', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const sent = { db, runId: run.id, leaseId: run.leaseId, attempt: run.attempt };
    expect(await applyLeasedEvents({ ...sent, events: logEvents(0, 3) })).toEqual({ applied: 3, acked: 3 });
    // Past its expiry but not swept: the lease id is the fence, as for a heartbeat.
    await backdate(db, run.id, 'leaseExpiresAt', 5_000);

    const answer = await resume(run.id, run.leaseId, runner);
    expect(answer).toMatchObject({
      resumed: true,
      nextSeq: 3,
      run: { id: run.id, attempt: 1, leaseEpoch: 1 },
    });
    const renewed = await readRun(db, run.id);
    expect(renewed).toMatchObject({ status: 'running', leaseId: run.leaseId, attempt: 1 });
    expect(renewed.leaseExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 60_000);
    // The resumed runner's events continue the sequence; nothing is taken for a duplicate.
    expect(await applyLeasedEvents({ ...sent, leaseEpoch: 1, events: logEvents(3, 2) })).toEqual({
      applied: 2,
      acked: 2,
    });
  });

  test("a batch the dead process sent that lands after the resume is refused: the resumed process's events keep their seqs, none taken for a duplicate", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const dead = { db, runId: run.id, leaseId: run.leaseId, attempt: run.attempt };
    const started: RunEvent = { seq: 0, type: 'stage.started', stage: 'train', at: new Date().toISOString() };
    await applyLeasedEvents({ ...dead, events: [started, ...logEvents(1, 2, 'before')] });

    const answer = await resume(run.id, run.leaseId, runner);
    if (!answer.resumed) throw new Error(`not resumed: ${answer.why}`);
    expect(answer).toMatchObject({ nextSeq: 3, run: { leaseEpoch: 1 } });
    // The dead process's request, in flight when it was killed, arrives now with the seqs
    // the resumed process numbers its own events from.
    expect(await applyLeasedEvents({ ...dead, events: logEvents(3, 2, 'dead') })).toBeNull();
    const resumed = { ...dead, leaseEpoch: answer.run.leaseEpoch };
    expect(await applyLeasedEvents({ ...resumed, events: logEvents(3, 2, 'resumed') })).toEqual({
      applied: 2,
      acked: 2,
    });
    expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([
      'before 1',
      'before 2',
      'resumed 3',
      'resumed 4',
    ]);
  });

  test("the dead process's heartbeat, finish and release after the resume are refused and change nothing; the resumed process's are taken", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const answer = await resume(run.id, run.leaseId, runner);
    if (!answer.resumed) throw new Error(`not resumed: ${answer.why}`);
    const dead = { db, runId: run.id, leaseId: run.leaseId };
    const before = await readRun(db, run.id);

    expect(await heartbeatRun({ ...dead, leaseTtlMs: LEASE_TTL_MS })).toBeNull();
    expect(await releaseLeasedRun({ ...dead, reason: 'stopped' })).toBeNull();
    expect(
      await finishLeasedRun({ ...dead, status: 'failed', reason: 'the dead one', metrics: {} }),
    ).toBeNull();
    expect(await readRun(db, run.id)).toEqual(before);

    const resumed = { ...dead, leaseEpoch: answer.run.leaseEpoch };
    expect(await heartbeatRun({ ...resumed, leaseTtlMs: LEASE_TTL_MS })).toMatchObject({ cancel: false });
    expect(
      await finishLeasedRun({ ...resumed, status: 'succeeded', reason: null, metrics: { loss: 0.1 } }),
    ).toMatchObject({ status: 'succeeded', metrics: { loss: 0.1 } });
  });

  test('each resume moves the epoch on, so a process resumed before and killed again is fenced too; a newer epoch than the lease has is refused as well', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    expect((await readRun(db, run.id)).leaseEpoch).toBe(0);
    const first = await resume(run.id, run.leaseId, runner);
    const second = await resume(run.id, run.leaseId, runner);
    expect(first).toMatchObject({ resumed: true, run: { leaseEpoch: 1 } });
    expect(second).toMatchObject({ resumed: true, run: { leaseEpoch: 2 } });
    const sent = { db, runId: run.id, leaseId: run.leaseId, attempt: run.attempt };
    expect(await applyLeasedEvents({ ...sent, leaseEpoch: 1, events: logEvents(0, 1) })).toBeNull();
    expect(await applyLeasedEvents({ ...sent, leaseEpoch: 3, events: logEvents(0, 1) })).toBeNull();
    expect(await applyLeasedEvents({ ...sent, leaseEpoch: 2, events: logEvents(0, 1) })).toEqual({
      applied: 1,
      acked: 1,
    });
  });

  test("a batch of the dead process racing the resume is either counted in nextSeq or refused; the resumed process's events are never lost", async () => {
    const { runner, repository } = await ownRunner();
    for (let round = 0; round < 8; round += 1) {
      const run = await startedRun(db, runner, { repository });
      const dead = { db, runId: run.id, leaseId: run.leaseId, attempt: run.attempt };
      const started: RunEvent = {
        seq: 0,
        type: 'stage.started',
        stage: 'train',
        at: new Date().toISOString(),
      };
      await applyLeasedEvents({ ...dead, events: [started] });
      const [late, answer] = await Promise.all([
        applyLeasedEvents({ ...dead, events: logEvents(1, 2, 'dead') }),
        resume(run.id, run.leaseId, runner),
      ]);
      if (!answer.resumed) throw new Error(`not resumed: ${answer.why}`);
      expect(answer.nextSeq).toBe(late === null ? 1 : 3);
      const resumed = { ...dead, leaseEpoch: answer.run.leaseEpoch };
      await applyLeasedEvents({ ...resumed, events: logEvents(answer.nextSeq, 2, 'resumed') });
      const deadLines = late === null ? [] : ['dead 1', 'dead 2'];
      const next = answer.nextSeq;
      expect(await getStageLog({ db, runId: run.id, stage: 'train' })).toEqual([
        ...deadLines,
        `resumed ${next}`,
        `resumed ${next + 1}`,
      ]);
    }
  });

  test('the stages that finished in the attempt come back as recorded (status, usage), a running one not', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const usage = { job: '41', cpuSeconds: 12, gpuSeconds: 0, source: 'sacct' as const };
    const prepare = makeStageRecord({ name: 'prepare', status: 'ran', usage });
    const events: RunEvent[] = [
      { seq: 0, type: 'stage.started', stage: 'prepare', at: '2025-01-02T03:04:05.678Z' },
      { seq: 1, type: 'stage.finished', stage: prepare },
      { seq: 2, type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:06.678Z' },
    ];
    await applyLeasedEvents({ db, runId: run.id, leaseId: run.leaseId, attempt: run.attempt, events });
    const answer = await resume(run.id, run.leaseId, runner);
    expect(answer).toMatchObject({ resumed: true, nextSeq: 3 });
    expect(answer.resumed && answer.finished).toEqual([prepare]);
  });

  test('a run claimed but not started yet resumes from seq 0, its start still to come', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    const claimed = await claim(db, runner);
    expect(claimed?.id).toBe(queued.id);
    const answer = await resume(queued.id, claimed?.leaseId ?? '', runner);
    expect(answer).toMatchObject({ resumed: true, nextSeq: 0, run: { startedAt: null } });
  });

  test('a wrong lease is refused as stale, and renews nothing', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await backdate(db, run.id, 'leaseExpiresAt', 5_000);
    const before = await readRun(db, run.id);
    expect(await resume(run.id, newLeaseId(), runner)).toEqual({ resumed: false, why: 'lease-stale' });
    expect((await readRun(db, run.id)).leaseExpiresAt).toEqual(before.leaseExpiresAt);
  });

  test("another runner's run is refused as not held, as an unknown run is, even with the right lease", async () => {
    const { runner, repository } = await ownRunner();
    const other = await registerRunner(db, { owner: uniqueOwner() });
    const run = await startedRun(db, runner, { repository });
    expect(await resume(run.id, run.leaseId, other)).toEqual({ resumed: false, why: 'not-held' });
    expect(await resume('NO-SUCH-RUN', run.leaseId, runner)).toEqual({ resumed: false, why: 'not-held' });
  });

  test('a run with a cancel pending is not resumed; given back under its lease, it ends as the cancel asked', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await requestCancel({ db, runId: run.id, reason: 'Cancelled by alice' });
    expect(await resume(run.id, run.leaseId, runner)).toEqual({ resumed: false, why: 'cancel-pending' });
    const released = await releaseLeasedRun({ db, runId: run.id, leaseId: run.leaseId, reason: 'restarted' });
    expect(released).toMatchObject({
      status: 'cancelled',
      statusReason: 'Cancelled by alice',
      leaseId: null,
    });
  });

  test('a run whose lease expired and was swept is refused: abandoned with no retry left, or queued again as the next attempt', async () => {
    const { runner, repository } = await ownRunner();
    const abandoned = await startedRun(db, runner, { repository, retries: 0 });
    await backdate(db, abandoned.id, 'leaseExpiresAt', 1_000);
    await sweepRuns({ db, settings: sweepSettings });
    expect((await readRun(db, abandoned.id)).status).toBe('abandoned');
    expect(await resume(abandoned.id, abandoned.leaseId, runner)).toEqual({
      resumed: false,
      why: 'lease-stale',
    });

    const retried = await startedRun(db, runner, { repository, retries: 1 });
    await backdate(db, retried.id, 'leaseExpiresAt', 1_000);
    await sweepRuns({ db, settings: sweepSettings });
    expect(await readRun(db, retried.id)).toMatchObject({ status: 'queued', attempt: 2 });
    expect(await resume(retried.id, retried.leaseId, runner)).toEqual({ resumed: false, why: 'lease-stale' });
  });

  test('a run finished under its lease is refused as stale', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await finishLeasedRun({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      status: 'succeeded',
      reason: null,
      metrics: {},
    });
    expect(await resume(run.id, run.leaseId, runner)).toEqual({ resumed: false, why: 'lease-stale' });
  });
});
