import { Writable } from 'node:stream';
import { eq, sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { NotFoundError, StaleLeaseError } from '../../client/control-plane-errors.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { runs } from '../../schemas/tables/runs.js';
import { sweepRuns } from '../../store/leases/sweep-runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';

const DIGEST = 'd'.repeat(64);

let database: TestDatabase;
let plane: TestControlPlane;
let logs = '';
let submitter: string;
let runner: { token: string; client: ControlPlaneClient };

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  logs = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs += chunk.toString();
      callback();
    },
  });
  plane = await startTestControlPlane({ db: database.db, logger: pino({ level: 'debug' }, sink) });
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const { token } = await plane.addRunner({ name: 'gpu-box' });
  runner = { token, client: new ControlPlaneClient({ url: plane.url, token, retries: 0 }) };
});
afterEach(async () => {
  await plane.close();
});

/** A run submitted, claimed by the runner and started; its claim. */
async function startedClaim(): Promise<Claim> {
  expect((await plane.submit(submitter, {})).status).toBe(201);
  const claim = await runner.client.claim(0, false);
  if (!claim) throw new Error('nothing to claim');
  const run = { runId: claim.run.id, lease: claim.lease };
  await runner.client.start(run, { codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) });
  return claim;
}

function resume(runId: string, lease: string, token = runner.token) {
  return plane.call('POST', `/api/v1/runs/${runId}/resume`, { token, json: { lease, fencing: 'epoch' } });
}

test('a restarted runner resumes its run in the same attempt: the claim again, the lease renewed, events continuing after the last stored', async () => {
  const claim = await startedClaim();
  const run = { runId: claim.run.id, lease: claim.lease };
  const at = new Date().toISOString();
  await runner.client.sendEvents(run, {
    attempt: 1,
    events: [
      { seq: 0, type: 'stage.started', stage: 'train', at },
      { seq: 1, type: 'stage.log', stage: 'train', lines: ['epoch 1'] },
    ],
  });
  await database.db
    .update(runs)
    .set({ leaseExpiresAt: sql`now() - interval '1 second'` })
    .where(eq(runs.id, run.runId));

  const reply = await runner.client.resume(run);
  expect(reply).toEqual({
    claim: { ...claim, git: { extraHeader: null } },
    started: true,
    nextSeq: 2,
    epoch: 1,
    // No stage finished in the attempt yet: nothing to reuse as it was recorded.
    finished: [],
  });
  const [row] = await database.db.select().from(runs).where(eq(runs.id, run.runId));
  expect(row?.leaseExpiresAt?.getTime()).toBeGreaterThan(Date.now() + 60_000);
  expect(await runner.client.heartbeat({ ...run, epoch: reply.epoch })).toEqual({
    cancel: false,
    reason: null,
    finishAs: null,
  });
  // The lease is a credential: the control plane's log never shows it.
  expect(logs).toContain('"msg":"run resumed"');
  expect(logs).not.toContain(claim.lease);
});

test('a run claimed but not started resumes with started false and its events from seq 0', async () => {
  expect((await plane.submit(submitter, {})).status).toBe(201);
  const claim = await runner.client.claim(0, false);
  if (!claim) throw new Error('nothing to claim');
  const reply = await runner.client.resume({ runId: claim.run.id, lease: claim.lease });
  expect(reply).toMatchObject({ started: false, nextSeq: 0, claim: { lease: claim.lease } });
});

test('a wrong or malformed lease is refused, naming the lease', async () => {
  const claim = await startedClaim();
  const stale = await resume(claim.run.id, 'e'.repeat(64));
  expect(stale.status).toBe(409);
  expect(stale.json).toMatchObject({ field: 'lease', error: expect.stringMatching(/the lease is stale/) });
  const malformed = await resume(claim.run.id, 'not-a-lease');
  expect(malformed.status).toBe(400);
  expect(malformed.json).toMatchObject({
    field: 'lease',
    error: expect.stringMatching(/expected the lease id this run was claimed with/),
  });
  await expect(runner.client.resume({ runId: claim.run.id, lease: 'e'.repeat(64) })).rejects.toBeInstanceOf(
    StaleLeaseError,
  );
});

test("another runner's run is 404 in the same words as an unknown run, even with its lease", async () => {
  const claim = await startedClaim();
  const other = await plane.addRunner({ name: 'cpu-box' });
  const answer = await resume(claim.run.id, claim.lease, other.token);
  expect(answer.status).toBe(404);
  expect(answer.json.error).toBe(`There is no run ${claim.run.id}`);
  const unknown = await resume('01NOSUCHRUN', claim.lease);
  expect(unknown.json.error).toBe('There is no run 01NOSUCHRUN');
  const client = new ControlPlaneClient({ url: plane.url, token: other.token, retries: 0 });
  await expect(client.resume({ runId: claim.run.id, lease: claim.lease })).rejects.toBeInstanceOf(
    NotFoundError,
  );
  const noToken = await plane.call('POST', `/api/v1/runs/${claim.run.id}/resume`, {
    json: { lease: claim.lease },
  });
  expect(noToken.status).toBe(401);
});

test('a run with a cancel pending is refused; released under its lease it ends as the cancel asked', async () => {
  const claim = await startedClaim();
  const cancel = await plane.call('POST', `/api/v1/runs/${claim.run.id}/cancel`, {
    token: submitter,
    json: { reason: 'Cancelled by alice' },
  });
  expect(cancel.status).toBeLessThan(300);
  const answer = await resume(claim.run.id, claim.lease);
  expect(answer.status).toBe(409);
  expect(answer.json).toMatchObject({ field: 'lease', error: expect.stringMatching(/has a cancel pending/) });
  const run = { runId: claim.run.id, lease: claim.lease };
  expect(await runner.client.release(run, 'restarted')).toEqual({ status: 'cancelled' });
});

test('a run whose lease expired and was swept is refused', async () => {
  const claim = await startedClaim();
  await database.db
    .update(runs)
    .set({ leaseExpiresAt: sql`now() - interval '1 second'` })
    .where(eq(runs.id, claim.run.id));
  await sweepRuns({ db: database.db, settings: { onlineWindowMs: 120_000, queueTimeoutMs: 3_600_000 } });
  const [row] = await database.db.select().from(runs).where(eq(runs.id, claim.run.id));
  expect(row?.status).toBe('abandoned');
  const answer = await resume(claim.run.id, claim.lease);
  expect(answer.status).toBe(409);
  expect(answer.json.field).toBe('lease');
});

test("after a resume, the dead process's requests still in flight are refused as stale and change nothing; the resumed process's events take the seqs from nextSeq", async () => {
  const claim = await startedClaim();
  const dead = { runId: claim.run.id, lease: claim.lease };
  const at = new Date().toISOString();
  await runner.client.sendEvents(dead, {
    attempt: 1,
    events: [{ seq: 0, type: 'stage.started', stage: 'train', at }],
  });
  const reply = await runner.client.resume(dead);
  expect(reply).toMatchObject({ nextSeq: 1, epoch: 1 });
  const resumed = { ...dead, epoch: reply.epoch };

  const late = {
    attempt: 1,
    events: [{ seq: 1, type: 'stage.log' as const, stage: 'train', lines: ['dead'] }],
  };
  await expect(runner.client.sendEvents(dead, late)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(runner.client.heartbeat(dead)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(
    runner.client.finish(dead, { status: 'failed', reason: 'the dead one', metrics: {} }),
  ).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(runner.client.release(dead, 'stopped')).rejects.toBeInstanceOf(StaleLeaseError);
  const refused = await plane.call('POST', `/api/v1/runs/${dead.runId}/events`, {
    token: runner.token,
    json: { lease: dead.lease, epoch: 0, ...late },
  });
  expect(refused.status).toBe(409);
  expect(refused.json).toMatchObject({
    field: 'lease',
    error: expect.stringMatching(/resumed by its restarted runner/),
  });

  expect(
    await runner.client.sendEvents(resumed, {
      attempt: 1,
      events: [{ seq: 1, type: 'stage.log', stage: 'train', lines: ['resumed'] }],
    }),
  ).toEqual({ applied: 1, acked: 1 });
  const log = await plane.call('GET', `/api/v1/runs/${dead.runId}/logs/train`, { token: submitter });
  expect(log.json).toMatchObject({ lines: ['resumed'] });
  const [row] = await database.db.select().from(runs).where(eq(runs.id, dead.runId));
  expect(row).toMatchObject({ status: 'running', leaseEpoch: 1 });
  expect(await runner.client.finish(resumed, { status: 'succeeded', reason: null, metrics: {} })).toEqual({
    status: 'succeeded',
  });
});

test('a runner that predates lease epochs is refused a resume, saying why, and changes nothing: it gives the run back under its lease', async () => {
  const claim = await startedClaim();
  const answer = await plane.call('POST', `/api/v1/runs/${claim.run.id}/resume`, {
    token: runner.token,
    json: { lease: claim.lease },
  });
  expect(answer.status).toBe(400);
  expect(answer.json).toMatchObject({
    field: 'body.fencing',
    error: expect.stringMatching(/predates lease epochs.*gives the run back, retried in a new attempt/),
  });
  const [row] = await database.db.select().from(runs).where(eq(runs.id, claim.run.id));
  expect(row).toMatchObject({ status: 'running', leaseEpoch: 0 });
  const old = await plane.call('POST', `/api/v1/runs/${claim.run.id}/release`, {
    token: runner.token,
    json: { lease: claim.lease, reason: 'The runner executing it was restarted and could not go on with it' },
  });
  expect(old.status).toBe(200);
  expect(old.json).toEqual({ status: 'queued' });
});
