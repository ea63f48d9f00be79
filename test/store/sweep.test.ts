import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runners, type RunnerRow } from '../../schemas/tables/runners.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { heartbeatRun } from '../../store/leases/heartbeat-run.js';
import { startLeasedRun } from '../../store/leases/start-leased-run.js';
import { recordWaitingReasons } from '../../store/leases/record-waiting-reasons.js';
import { sweepRuns } from '../../store/leases/sweep-runs.js';
import { RELEASE_LIMIT } from '../../store/leases/release-limit.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { databaseBackends } from '../helpers/test-databases.js';
import {
  backdate,
  claim,
  queueRun,
  readRun,
  registerRunner,
  startedRun,
  uniqueOwner,
} from './control-plane-fixtures.js';

const settings = { onlineWindowMs: 120_000, queueTimeoutMs: 3_600_000 };

describe.each(databaseBackends)('the sweeper on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function ownRunner(labels: string[] = []): Promise<{ runner: RunnerRow; repository: string }> {
    const owner = uniqueOwner();
    return { runner: await registerRunner(db, { owner, labels }), repository: `${owner}/train` };
  }

  /** Makes a run's lease expire a second ago. */
  async function loseLease(runId: string): Promise<void> {
    await backdate(db, runId, 'leaseExpiresAt', 1_000);
  }

  test('a started run whose lease expired, with no retry left, is abandoned naming its runner', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    await loseLease(run.id);
    const { leaseExpiresAt } = await readRun(db, run.id);
    const result = await sweepRuns({ db, settings });
    expect(result.abandoned).toContain(run.id);
    const abandoned = await readRun(db, run.id);
    const at = leaseExpiresAt?.toISOString().slice(0, 19).replace('T', ' ');
    expect(abandoned).toMatchObject({
      status: 'abandoned',
      statusReason: `Runner ${runner.name} stopped reporting; its lease expired at ${at} UTC`,
      leaseId: null,
      leaseExpiresAt: null,
    });
    expect(abandoned.finishedAt).toBeInstanceOf(Date);
    expect(abandoned.durationMs).toBeGreaterThanOrEqual(0);
    // The runner coming back learns it lost the run.
    expect(await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 })).toBeNull();
    expect((await sweepRuns({ db, settings })).abandoned).not.toContain(run.id);
  });

  test('a lease that expires for real is swept too (1 s TTL, the database clock)', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository });
    // A lease not expired is left alone: one longer than any stall of a busy machine (a
    // second passed between a renewal and the next sweep there).
    await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 });
    expect((await sweepRuns({ db, settings })).abandoned).not.toContain(run.id);
    await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 1_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await sweepRuns({ db, settings })).abandoned).toContain(run.id);
  });

  test('a run with retries left is queued again, attempt + 1, until they are used up', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository, retries: 1 });
    await loseLease(run.id);
    const result = await sweepRuns({ db, settings });
    expect(result.requeued).toContain(run.id);
    const requeued = await readRun(db, run.id);
    expect(requeued).toMatchObject({
      status: 'queued',
      attempt: 2,
      leaseExpirations: 1,
      leaseId: null,
      startedAt: null,
    });
    expect(requeued.statusReason).toMatch(
      new RegExp(
        `^Runner ${runner.name} stopped reporting; its lease expired at .+ UTC; queued again \\(retry 1 of 1\\)$`,
      ),
    );

    const second = await claim(db, runner);
    expect(second).toMatchObject({ id: run.id, attempt: 2 });
    await startLeasedRun({
      db,
      runId: run.id,
      leaseId: second?.leaseId ?? '',
      codeDigest: 'a'.repeat(64),
      envDigest: 'b'.repeat(64),
      params: second?.params ?? {},
      paramsDigest: second?.paramsDigest ?? '',
    });
    await loseLease(run.id);
    expect((await sweepRuns({ db, settings })).abandoned).toContain(run.id);
    expect(await readRun(db, run.id)).toMatchObject({ status: 'abandoned', attempt: 2, leaseExpirations: 2 });
  });

  test('a run claimed but never started goes back to the queue without using a retry', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    const claimed = await claim(db, runner);
    expect(claimed?.id).toBe(queued.id);
    await loseLease(queued.id);
    expect((await sweepRuns({ db, settings })).requeued).toContain(queued.id);
    expect(await readRun(db, queued.id)).toMatchObject({
      status: 'queued',
      attempt: 1,
      leaseExpirations: 0,
      statusReason: expect.stringContaining(
        `Runner ${runner.name} took the run but stopped reporting before starting it`,
      ),
    });
  });

  test('a run taken and never started by a runner crashing in a loop is abandoned past the release limit', async () => {
    const { runner, repository } = await ownRunner();
    const queued = await queueRun(db, { repository });
    for (let release = 1; release <= RELEASE_LIMIT + 1; release += 1) {
      expect((await claim(db, runner))?.id).toBe(queued.id);
      await loseLease(queued.id);
      await sweepRuns({ db, settings });
    }
    expect(await readRun(db, queued.id)).toMatchObject({
      status: 'abandoned',
      releases: RELEASE_LIMIT + 1,
      statusReason:
        `Runner ${runner.name} took the run but stopped reporting before starting it; it went back to the queue ` +
        `${RELEASE_LIMIT} times already without finishing (a runner restarting in a loop?), so it is abandoned`,
    });
  });

  test('a run whose runner vanished after a cancel was asked finishes as asked', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository, retries: 3 });
    await db
      .update(runs)
      .set({ cancelRequested: true, cancelAs: 'cancelled', cancelReason: 'Cancelled by alice' })
      .where(eq(runs.id, run.id));
    await loseLease(run.id);
    expect((await sweepRuns({ db, settings })).cancelled).toContain(run.id);
    expect(await readRun(db, run.id)).toMatchObject({
      status: 'cancelled',
      statusReason: 'Cancelled by alice',
    });
  });

  test('a run queued past the queue timeout times out, saying which labels nobody carried', async () => {
    const owner = uniqueOwner();
    const gpu = await queueRun(db, { repository: `${owner}/train`, labels: ['gpu', 'a100'] });
    const plain = await queueRun(db, { repository: `${owner}/train` });
    const fresh = await queueRun(db, { repository: `${owner}/train` });
    await backdate(db, gpu.id, 'queuedAt', 3_601_000);
    await backdate(db, plain.id, 'queuedAt', 3_601_000);
    // Created long ago but queued again just now: the timeout counts from the requeue.
    await backdate(db, fresh.id, 'createdAt', 10 * 3_600_000);
    const result = await sweepRuns({ db, settings });
    expect(result.expired).toEqual(expect.arrayContaining([gpu.id, plain.id]));
    expect(result.expired).not.toContain(fresh.id);
    expect(await readRun(db, gpu.id)).toMatchObject({
      status: 'timed_out',
      statusReason: 'No runner labelled gpu, a100 took the run within 1h',
      durationMs: null,
    });
    expect((await readRun(db, plain.id)).statusReason).toBe('No runner took the run within 1h');
  });

  test('a running run past its timeout is flagged to stop as timed out, once', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository, timeoutMs: 6 * 3_600_000 });
    const onTime = await startedRun(db, runner, { repository, timeoutMs: 6 * 3_600_000 });
    await backdate(db, run.id, 'startedAt', 6 * 3_600_000 + 1_000);
    await backdate(db, onTime.id, 'startedAt', 6 * 3_600_000 - 60_000);
    const result = await sweepRuns({ db, settings });
    expect(result.timedOut).toContain(run.id);
    expect(result.timedOut).not.toContain(onTime.id);
    expect(await heartbeatRun({ db, runId: run.id, leaseId: run.leaseId, leaseTtlMs: 90_000 })).toEqual({
      cancel: true,
      reason: 'The run exceeded its timeout of 6h',
      finishAs: 'timed_out',
    });
    expect((await sweepRuns({ db, settings })).timedOut).not.toContain(run.id);
  });

  test('a queued run says which runner it waits for, or that it is queued', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const gpu = await queueRun(db, { repository, labels: ['gpu', 'a100'] });
    const plain = await queueRun(db, { repository });
    const fork = await queueRun(db, { repository, fork: true, trustDomain: 'pr:3' });
    const again = await queueRun(db, {
      repository,
      statusReason: 'Runner old-box stopped (SIGTERM); queued again',
    });
    const reasons = async () =>
      Object.fromEntries(
        await Promise.all(
          [gpu, plain, fork, again].map(async (run) => [run.id, (await readRun(db, run.id)).statusReason]),
        ),
      );

    await recordWaitingReasons({ db, onlineWindowMs: settings.onlineWindowMs });
    expect(await reasons()).toEqual({
      [gpu.id]: 'Waiting for a runner labelled gpu, a100',
      [plain.id]: `Waiting for a runner for ${repository}`,
      [fork.id]: `Waiting for a runner for ${repository} that accepts forks`,
      [again.id]: `Waiting for a runner for ${repository}`,
    });

    // A runner comes online, but it is not labelled gpu and refuses forks; a gpu runner
    // of another owner is no help either.
    await registerRunner(db, { owner: uniqueOwner(), labels: ['gpu', 'a100'] });
    const cpu = await registerRunner(db, { owner });
    const changed = await sweepRuns({ db, settings });
    expect(changed.waiting).toEqual(expect.arrayContaining([plain.id, again.id]));
    expect(await reasons()).toMatchObject({
      [gpu.id]: 'Waiting for a runner labelled gpu, a100',
      [plain.id]: 'Queued',
      [fork.id]: `Waiting for a runner for ${repository} that accepts forks`,
      [again.id]: 'Queued',
    });
    // Nothing changes, nothing is written.
    expect((await sweepRuns({ db, settings })).waiting).toEqual([]);

    // The runner asks for work with --accept-forks; then it goes quiet.
    await claim(db, { ...cpu, acceptsForks: false }, { acceptForks: true });
    await recordWaitingReasons({ db, onlineWindowMs: settings.onlineWindowMs });
    expect((await reasons())[fork.id]).toBe('Queued');
    await db
      .update(runners)
      .set({ lastSeenAt: sql`now() - interval '1 hour'` })
      .where(eq(runners.id, cpu.id));
    await recordWaitingReasons({ db, onlineWindowMs: settings.onlineWindowMs });
    expect((await reasons())[again.id]).toBe(`Waiting for a runner for ${repository}`);
  });

  test('a requeue reason is kept while some runner could take the run', async () => {
    const { runner, repository } = await ownRunner();
    const run = await startedRun(db, runner, { repository, retries: 1 });
    await loseLease(run.id);
    await sweepRuns({ db, settings });
    expect((await readRun(db, run.id)).statusReason).toMatch(/queued again \(retry 1 of 1\)$/);
  });
});

describe('the sweeper under concurrency on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  test('two sweepers at once change each run once', async () => {
    const { db } = database;
    const owner = uniqueOwner();
    const runner = await registerRunner(db, { owner });
    const lost: string[] = [];
    for (let index = 0; index < 30; index++) {
      const run = await startedRun(db, runner, { repository: `${owner}/train`, retries: 1 });
      await backdate(db, run.id, 'leaseExpiresAt', 1_000);
      lost.push(run.id);
    }
    const results = await Promise.all([sweepRuns({ db, settings }), sweepRuns({ db, settings })]);
    const requeued = results.flatMap((result) => result.requeued);
    expect(requeued.sort()).toEqual([...lost].sort());
    for (const runId of lost) {
      expect(await readRun(db, runId)).toMatchObject({ status: 'queued', attempt: 2, leaseExpirations: 1 });
    }
  });
});
