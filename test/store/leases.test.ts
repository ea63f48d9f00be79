import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { digestOf } from '../../schemas/canonical-json.js';
import type { Params } from '../../schemas/resolve-params.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Run } from '../../schemas/tables/runs.js';
import { applyLeasedEvents } from '../../store/apply-leased-events.js';
import type { Database } from '../../store/database.js';
import { finishLeasedRun } from '../../store/finish-leased-run.js';
import { heartbeatRun } from '../../store/heartbeat-run.js';
import { releaseLeasedRun } from '../../store/release-leased-run.js';
import { RELEASE_LIMIT } from '../../store/release-limit.js';
import { requestCancel } from '../../store/request-cancel.js';
import { startLeasedRun } from '../../store/start-leased-run.js';
import { databaseBackends } from '../helpers/test-databases.js';
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

const codeDigest = 'a'.repeat(64);
const envDigest = 'b'.repeat(64);

describe.each(databaseBackends)('leases on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  /** Starts a run under `leaseId` as a runner that resolved `params` (the queued ones, unless a test says). */
  function start(runId: string, leaseId: string, params: Params): Promise<Run | null> {
    return startLeasedRun({
      db,
      runId,
      leaseId,
      codeDigest,
      envDigest,
      params,
      paramsDigest: digestOf(params),
    });
  }

  async function ownRunner(): Promise<{ runner: RunnerRow; repository: string }> {
    const owner = uniqueOwner();
    return { runner: await registerRunner(db, { owner }), repository: `${owner}/train` };
  }

  test('a heartbeat renews the lease from now, and says nothing while no cancel is asked', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await backdate(db, run.id, 'leaseExpiresAt', 5_000);
    const answer = await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 });
    expect(answer).toEqual({ cancel: false, reason: null, finishAs: null });
    const renewed = await readRun(db, run.id);
    expect(renewed.leaseExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 60_000);
  });

  test('a cancel reaches the runner in its heartbeat; a queued run is cancelled at once', async () => {
    const { runner, repository } = await ownRunner();
    const running = await startedRun(db, runner, { repository });
    const flagged = await requestCancel({ db, runId: running.id, reason: 'Cancelled by alice' });
    expect(flagged).toMatchObject({
      status: 'running',
      cancelRequested: true,
      cancelReason: 'Cancelled by alice',
      cancelAs: 'cancelled',
    });
    expect(
      await heartbeatRun({ db, runId: running.id, leaseId: running.leaseId, leaseTtlMs: 90_000 }),
    ).toEqual({
      cancel: true,
      reason: 'Cancelled by alice',
      finishAs: 'cancelled',
    });
    // A second cancel keeps the first reason.
    await requestCancel({ db, runId: running.id, reason: 'Cancelled by bob' });
    expect((await readRun(db, running.id)).cancelReason).toBe('Cancelled by alice');

    const queued = await queueRun(db, { repository });
    const cancelled = await requestCancel({ db, runId: queued.id, reason: 'Cancelled by alice' });
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      statusReason: 'Cancelled by alice',
      durationMs: null,
    });
    expect(cancelled?.finishedAt).toBeInstanceOf(Date);
  });

  test('a finished run is returned unchanged by a cancel, and an unknown run is null', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const finished = await finishLeasedRun({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      status: 'succeeded',
      reason: null,
      metrics: { accuracy: 0.9 },
    });
    expect(await requestCancel({ db, runId: run.id, reason: 'too late' })).toEqual(finished);
    expect(await requestCancel({ db, runId: 'NO-SUCH-RUN', reason: 'x' })).toBeNull();
  });

  test('starting records the stamp once; starting again under the lease returns the same run', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    const claimed = await claim(db, runner);
    const leaseId = claimed?.leaseId ?? '';
    const started = await start(queued.id, leaseId, claimed?.params ?? {});
    expect(started).toMatchObject({ status: 'running', codeDigest, envDigest, dirty: false });
    expect(started?.startedAt).toBeInstanceOf(Date);
    const again = await start(queued.id, leaseId, claimed?.params ?? {});
    expect(again).toEqual(started);
  });

  test('finishing records the outcome and duration; a finish sent again returns the run as finished', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await backdate(db, run.id, 'startedAt', 1_500);
    const finished = await finishLeasedRun({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      status: 'failed',
      reason: 'Stage train failed: exit code 1',
      metrics: { loss: 0.5 },
    });
    expect(finished).toMatchObject({
      status: 'failed',
      statusReason: 'Stage train failed: exit code 1',
      metrics: { loss: 0.5 },
      leaseExpiresAt: null,
    });
    expect(finished?.durationMs).toBeGreaterThanOrEqual(1_400);
    const again = await finishLeasedRun({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      status: 'succeeded',
      reason: null,
      metrics: {},
    });
    expect(again).toEqual(finished);
    expect(await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 })).toBeNull();
  });

  test('a start records the params the runner resolved: the defaults it added are what ran', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, {
      repository,
      params: { lr: 0.1 },
      paramsDigest: digestOf({ lr: 0.1 }),
    });
    const leaseId = (await claim(db, runner))?.leaseId ?? '';
    const resolved = { lr: 0.1, epochs: 3 };
    const started = await start(queued.id, leaseId, resolved);
    expect(started).toMatchObject({ status: 'running', params: resolved, paramsDigest: digestOf(resolved) });
  });

  test('a start with params resolved otherwise than queued fails the run, naming each difference; retried, it answers the failed run', async () => {
    const { runner, repository } = await ownRunner();
    const asked = { lr: 0.1, seed: 2 };
    const queued = await queueRun(db, { repository, params: asked, paramsDigest: digestOf(asked) });
    const leaseId = (await claim(db, runner))?.leaseId ?? '';
    const resolved = { lr: '0.1' };
    const failed = await start(queued.id, leaseId, resolved);
    expect(failed).toMatchObject({
      status: 'failed',
      params: asked,
      paramsDigest: digestOf(asked),
      durationMs: 0,
    });
    expect(failed?.statusReason).toBe(
      'The runner resolved the params differently from how the run was queued, so nothing ran: ' +
        `'lr' was queued as 0.1 (a number) and resolved as "0.1" (a string); 'seed' was queued as 2 (a number) but not resolved`,
    );
    expect(failed?.finishedAt).toBeInstanceOf(Date);
    expect(failed?.leaseExpiresAt).toBeNull();
    expect(await start(queued.id, leaseId, resolved)).toEqual(failed);
    expect(await heartbeatRun({ db, runId: queued.id, leaseId, leaseTtlMs: 90_000 })).toBeNull();
  });

  test('a stale lease changes nothing: heartbeat, start, events, finish and release all answer null', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const stale = newLeaseId();
    const before = await readRun(db, run.id);
    const runId = run.id;
    expect(await heartbeatRun({ db, runId, leaseId: stale, leaseTtlMs: 90_000 })).toBeNull();
    expect(await start(runId, stale, run.params)).toBeNull();
    expect(
      await applyLeasedEvents({
        db,
        runId,
        leaseId: stale,
        attempt: 1,
        events: [{ seq: 0, type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' }],
      }),
    ).toBeNull();
    expect(
      await finishLeasedRun({ db, runId, leaseId: stale, status: 'succeeded', reason: null, metrics: {} }),
    ).toBeNull();
    expect(await releaseLeasedRun({ db, runId, leaseId: stale, reason: 'SIGTERM' })).toBeNull();
    expect(await readRun(db, run.id)).toEqual(before);
  });

  test("the lease of a released run is stale: the old runner's writes change nothing", async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    const released = await releaseLeasedRun({
      db,
      runId: run.id,
      leaseId: run.leaseId,
      reason: `Runner ${runner.name} stopped (SIGTERM); queued again`,
    });
    expect(released).toMatchObject({
      status: 'queued',
      statusReason: `Runner ${runner.name} stopped (SIGTERM); queued again`,
      attempt: 2,
      leaseId: null,
      leaseExpiresAt: null,
      startedAt: null,
      retries: 0,
      leaseExpirations: 0,
    });
    const before = await readRun(db, run.id);
    expect(await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 })).toBeNull();
    expect(
      await finishLeasedRun({
        db,
        runId: run.id,
        leaseId: run.leaseId,
        status: 'succeeded',
        reason: null,
        metrics: {},
      }),
    ).toBeNull();
    expect(await readRun(db, run.id)).toEqual(before);

    // Another runner takes it over under a new lease; the old lease stays stale.
    const next = await claim(db, runner);
    expect(next).toMatchObject({ id: run.id, attempt: 2, status: 'running' });
    expect(next?.leaseId).not.toBe(run.leaseId);
    expect(await start(run.id, run.leaseId, run.params)).toBeNull();
  });

  test('a run released before it started keeps its attempt; one whose cancel was asked finishes instead', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    const claimed = await claim(db, runner);
    const released = await releaseLeasedRun({
      db,
      runId: queued.id,
      leaseId: claimed?.leaseId ?? '',
      reason: 'Runner went away before it received the claim',
    });
    expect(released).toMatchObject({ status: 'queued', attempt: 1 });

    const other = await ownRunner();
    const running = await startedRun(db, other.runner, { repository: other.repository });
    await requestCancel({ db, runId: running.id, reason: 'Cancelled by alice' });
    const stopped = await releaseLeasedRun({
      db,
      runId: running.id,
      leaseId: running.leaseId,
      reason: 'SIGTERM',
    });
    expect(stopped).toMatchObject({ status: 'cancelled', statusReason: 'Cancelled by alice', leaseId: null });
    expect(stopped?.finishedAt).toBeInstanceOf(Date);
  });
  test('a run a runner restarting in a loop keeps giving back is abandoned past the release limit, saying why', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository, retries: 2 });
    const stopped = `Runner ${runner.name} stopped (SIGTERM); queued again`;
    for (let release = 1; release <= RELEASE_LIMIT; release += 1) {
      const claimed = await claim(db, runner);
      expect(claimed?.id).toBe(queued.id);
      await start(queued.id, claimed?.leaseId ?? '', queued.params);
      const released = await releaseLeasedRun({
        db,
        runId: queued.id,
        leaseId: claimed?.leaseId ?? '',
        reason: stopped,
      });
      expect(released).toMatchObject({ status: 'queued', releases: release, leaseExpirations: 0 });
    }
    const last = await claim(db, runner);
    const abandoned = await releaseLeasedRun({
      db,
      runId: queued.id,
      leaseId: last?.leaseId ?? '',
      reason: stopped,
    });
    expect(abandoned).toMatchObject({ status: 'abandoned', releases: RELEASE_LIMIT + 1, leaseId: null });
    expect(abandoned?.statusReason).toBe(
      `${stopped}; it went back to the queue ${RELEASE_LIMIT} times already without finishing (a runner restarting in a loop?), so it is abandoned`,
    );
    expect(abandoned?.finishedAt).toBeInstanceOf(Date);
    expect(await claim(db, runner)).toBeNull();
  });
});
