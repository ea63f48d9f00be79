import { eq, sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { doorbellChannel, RunDoorbell } from '../../app/run-doorbell.js';
import { startRunSweeper, type RunSweeper } from '../../app/run-sweeper.js';
import { controlPlaneAvailability } from '../../schemas/tables/control-plane-availability.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  removeKeys,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import { backdate } from '../store/control-plane-fixtures.js';

const DIGEST = 'd'.repeat(64);

let database: TestDatabase;
let plane: TestControlPlane;
let sweeper: RunSweeper;
let submitter: string;

async function startSweeper(
  leaseTtlMs = plane.settings.leaseTtlMs,
  onSwept?: () => void,
): Promise<RunSweeper> {
  const logger = pino({ level: 'silent' });
  return startRunSweeper({
    db: database.db,
    settings: { ...plane.settings, leaseTtlMs },
    doorbell: new RunDoorbell(plane.redis, doorbellChannel(plane.settings.queuePrefix), logger),
    logger,
    ...(onSwept ? { onSwept } : {}),
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({
    db: database.db,
    env: {
      // Room for a loaded machine: a heartbeat's round trip there can take most of a second.
      FLUKSIO_LEASE_TTL: '3s',
      FLUKSIO_HEARTBEAT_INTERVAL: '300ms',
      FLUKSIO_SWEEP_INTERVAL: '400ms',
      FLUKSIO_CLAIM_RECHECK: '1m',
    },
  });
  sweeper = await startSweeper();
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
});
afterEach(async () => {
  await sweeper.close();
  await plane.close();
});

async function runRow(id: string): Promise<Run> {
  const [run] = await database.db.select().from(runs).where(eq(runs.id, id));
  if (!run) throw new Error(`no run ${id}`);
  return run;
}

/** Polls the run until `done` holds (or fails the test after `timeoutMs`). */
async function waitForRun(id: string, done: (run: Run) => boolean, timeoutMs = 30_000): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await runRow(id);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} stayed ${run.status}: ${run.statusReason}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the sweeper', () => {
  test('a claimed run whose runner vanished before starting it is queued again, and a waiting runner gets it', async () => {
    const vanishing = await plane.addRunner({ name: 'vanishing' });
    const waiting = await plane.addRunner({ name: 'waiting' });
    await plane.submit(submitter, {});
    const first = await plane.claim(vanishing.token);
    if (!first) throw new Error('nothing claimed');
    // Re-checks are a minute apart and the claim waits 55 s: a hand-over well before either
    // (a lease TTL and a sweep from now, stretched by a busy machine) came from the sweeper's ring.
    const started = Date.now();
    const second = await plane.claim(waiting.token, 55);
    expect(second?.run.id).toBe(first.run.id);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await runRow(first.run.id)).runnerName).toBe('waiting');
  });

  test('a started run whose lease expired with no retry left is abandoned, naming its runner, and its baseline is fixed', async () => {
    const { token } = await plane.addRunner({ name: 'gpu-box-1' });
    await plane.submit(submitter, { retries: 0 });
    const claim = await plane.claim(token);
    if (!claim) throw new Error('nothing claimed');
    await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    const run = await waitForRun(claim.run.id, (row) => row.status === 'abandoned');
    expect(run.statusReason).toMatch(/gpu-box-1 stopped reporting/);
    // It never reached the finish route: the sweeper fixes its baseline (none here).
    expect(await waitForRun(claim.run.id, (row) => row.baselineFixed)).toMatchObject({ baselineRunId: null });
    const late = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
      token,
      json: { lease: claim.lease },
    });
    expect(late.status).toBe(409);
  });

  test('a heartbeating run is left alone', async () => {
    const { token } = await plane.addRunner({ name: 'steady' });
    await plane.submit(submitter, {});
    const claim = await plane.claim(token);
    if (!claim) throw new Error('nothing claimed');
    // Beats spanning more than the lease's time to live, over many sweeps.
    for (let beat = 0; beat < 16; beat += 1) {
      const answer = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
        token,
        json: { lease: claim.lease },
      });
      expect(answer.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(await runRow(claim.run.id)).toMatchObject({ status: 'running', leaseId: claim.lease });
  });

  test('sweeps go on after Redis lost every key (flushed or failed over)', async () => {
    await removeKeys(plane.redis, plane.settings.queuePrefix);
    const { token } = await plane.addRunner({ name: 'box' });
    await plane.submit(submitter, { retries: 0 });
    const claim = await plane.claim(token);
    if (!claim) throw new Error('nothing claimed');
    await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    await waitForRun(claim.run.id, (row) => row.status === 'abandoned');
  });

  test('a lease that expired while the control plane was down is not swept before its runner could beat again: the run stays its runner’s', async () => {
    // The control plane is down: nothing sweeps, and no heartbeat reaches it.
    await sweeper.close();
    const { token } = await plane.addRunner({ name: 'patient' });
    await plane.submit(submitter, { retries: 0 });
    const claim = await plane.claim(token);
    if (!claim) throw new Error('nothing claimed');
    await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    // The outage outlasted the lease: its runner's beats all failed meanwhile, and the
    // control plane's last beat of its own availability came before it.
    await backdate(database.db, claim.run.id, 'leaseExpiresAt', 60_000);
    await database.db
      .update(controlPlaneAvailability)
      .set({ lastBeatAt: sql`now() - interval '2 minutes'`, availableSince: sql`now() - interval '1 hour'` });
    // A run queued past the queue timeout, which the first sweep ends: it shows that sweep ran.
    const witness = ((await plane.submit(submitter, {})).json.run as { id: string }).id;
    await backdate(database.db, witness, 'queuedAt', 25 * 3_600_000);
    // The control plane is back, and sweeps at once; its runners' leases last a minute (a
    // busy machine's stall between this sweep and the beat below must not end the grace).
    sweeper = await startSweeper(60_000);
    await waitForRun(witness, (row) => row.status === 'timed_out');
    expect(await runRow(claim.run.id)).toMatchObject({ status: 'running', leaseId: claim.lease });
    const beat = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
      token,
      json: { lease: claim.lease },
    });
    expect(beat.status).toBe(200);
  });

  test('a crash-looping control plane, none of whose processes lives a lease’s time, still abandons a dead runner’s run', async () => {
    await sweeper.close();
    const { token } = await plane.addRunner({ name: 'dead-box' });
    await plane.submit(submitter, { retries: 0 });
    const claim = await plane.claim(token);
    if (!claim) throw new Error('nothing claimed');
    await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    // The runner is gone (it never beats again). The control plane's processes (replicas
    // restarted in turn, or one crash-looping) each sweep once and die, far sooner than
    // their 10 s lease time to live; the next starts at once.
    const deadline = Date.now() + 60_000;
    let restarts = 0;
    for (;;) {
      let sweptOnce!: () => void;
      const swept = new Promise<void>((resolve) => (sweptOnce = resolve));
      sweeper = await startSweeper(10_000, () => sweptOnce());
      await swept;
      await sweeper.close();
      restarts += 1;
      const run = await runRow(claim.run.id);
      if (run.status === 'abandoned') {
        expect(run.statusReason).toMatch(/dead-box stopped reporting/);
        break;
      }
      if (Date.now() > deadline)
        throw new Error(`after ${restarts} restarts the run is still ${run.status}: ${run.statusReason}`);
    }
    expect(restarts).toBeGreaterThan(1);
    sweeper = await startSweeper();
  }, 120_000);
});
