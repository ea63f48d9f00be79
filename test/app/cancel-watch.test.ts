import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import { requestCancel } from '../../store/runs/request-cancel.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  resetTables,
  startTestControlPlane,
  testPrefix,
  type TestControlPlane,
} from './control-plane-harness.js';

// Two control plane processes on one database and one Redis, as behind a load balancer:
// `front` takes the claim and the cancel, `back` holds the runner's watch. Back looks at
// Postgres again only once a minute, and a watch waits 55 s: an answer well before either
// comes from the run bell.
const WAIT_SECONDS = 55;
/** Well under the re-check and the watch's wait: an answer sooner came from a wake-up. */
const SOONER_THAN_A_RECHECK_MS = 20_000;

let database: TestDatabase;
let front: TestControlPlane;
let back: TestControlPlane;
let submitter: string;
let runnerToken: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  const prefix = testPrefix();
  front = await startTestControlPlane({ db: database.db, env: { FLUKSIO_QUEUE_PREFIX: prefix } });
  back = await startTestControlPlane({
    db: database.db,
    env: { FLUKSIO_QUEUE_PREFIX: prefix, FLUKSIO_CLAIM_RECHECK: '1m' },
  });
  submitter = await front.addApiToken({ repositories: ['acme/model'] });
  ({ token: runnerToken } = await front.addRunner({ name: 'box' }));
});
afterEach(async () => {
  await back.close();
  await front.close();
});

async function claimed(): Promise<Claim> {
  expect((await front.submit(submitter, {})).status).toBe(201);
  const claim = await front.claim(runnerToken);
  if (!claim) throw new Error('nothing to claim');
  return claim;
}

/** A watch of the claimed run, parked in `plane`; resolves with its answer and when it came. */
function watch(plane: TestControlPlane, claim: Claim, lease = claim.lease) {
  return plane
    .call('POST', `/api/v1/runs/${claim.run.id}/watch`, {
      token: runnerToken,
      json: { lease, waitSeconds: WAIT_SECONDS },
    })
    .then((answer) => ({ ...answer, at: Date.now() }));
}

/** Waits until `count` watches are parked in `plane` (its `fluksio_cancel_watches_parked` gauge). */
async function parked(plane: TestControlPlane, count: number): Promise<void> {
  await waitFor(`${count} parked watches`, async () => {
    const { text } = await plane.call('GET', '/metrics');
    return new RegExp(`^fluksio_cancel_watches_parked ${count}$`, 'm').test(text);
  });
}

describe('a runner’s watch for its run’s cancel', () => {
  test('parked in one control plane, it answers a cancel made through another at once, woken by the run bell', async () => {
    const claim = await claimed();
    const watching = watch(back, claim);
    await parked(back, 1);
    const cancelledAt = Date.now();
    const cancel = await front.call('POST', `/api/v1/runs/${claim.run.id}/cancel`, {
      token: submitter,
      json: { reason: 'wrong params' },
    });
    expect(cancel.status).toBe(200);
    const answer = await watching;
    expect(answer).toMatchObject({
      status: 200,
      json: { cancel: true, reason: 'wrong params', finishAs: 'cancelled' },
    });
    expect(answer.at - cancelledAt).toBeLessThan(SOONER_THAN_A_RECHECK_MS);
    await parked(back, 0);
  });

  test('a cancel whose ring was lost (written straight to Postgres) is found by the re-check', async () => {
    await back.close();
    back = await startTestControlPlane({
      db: database.db,
      env: { FLUKSIO_QUEUE_PREFIX: front.settings.queuePrefix, FLUKSIO_CLAIM_RECHECK: '300ms' },
    });
    const claim = await claimed();
    const watching = watch(back, claim);
    await parked(back, 1);
    const cancelledAt = Date.now();
    // Nobody rings: what a Redis outage or a dropped message leaves.
    await requestCancel({ db: database.db, runId: claim.run.id, reason: 'Cancelled while Redis was away' });
    const answer = await watching;
    expect(answer.json).toEqual({
      cancel: true,
      reason: 'Cancelled while Redis was away',
      finishAs: 'cancelled',
    });
    expect(answer.at - cancelledAt).toBeLessThan(SOONER_THAN_A_RECHECK_MS);
  });

  test('a run already cancelled is answered at once, without parking', async () => {
    const claim = await claimed();
    await front.call('POST', `/api/v1/runs/${claim.run.id}/cancel`, { token: submitter, json: {} });
    const answer = await watch(back, claim);
    expect(answer.json).toMatchObject({ cancel: true, finishAs: 'cancelled' });
  });

  test('a run released while its watch is parked answers 409: the lease is gone', async () => {
    const claim = await claimed();
    const watching = watch(back, claim);
    await parked(back, 1);
    await front.call('POST', `/api/v1/runs/${claim.run.id}/release`, {
      token: runnerToken,
      json: { lease: claim.lease, reason: 'SIGTERM' },
    });
    const answer = await watching;
    expect(answer.status).toBe(409);
    expect(answer.json).toMatchObject({ field: 'lease', error: expect.stringMatching(/stale/) });
  });

  test('a wrong lease is 409, another runner’s run 404, a bad wait 400, and none of them parks', async () => {
    const claim = await claimed();
    const wrongLease = await watch(back, claim, 'f'.repeat(64));
    expect(wrongLease.status).toBe(409);
    expect(wrongLease.json.field).toBe('lease');

    const intruder = await front.addRunner({ name: 'intruder' });
    const foreign = await back.call('POST', `/api/v1/runs/${claim.run.id}/watch`, {
      token: intruder.token,
      json: { lease: claim.lease },
    });
    expect(foreign).toMatchObject({
      status: 404,
      json: { error: `There is no run ${claim.run.id}`, field: 'id' },
    });

    const tooLong = await back.call('POST', `/api/v1/runs/${claim.run.id}/watch`, {
      token: runnerToken,
      json: { lease: claim.lease, waitSeconds: 3600 },
    });
    expect(tooLong).toMatchObject({ status: 400, json: { field: 'waitSeconds' } });

    const anonymous = await back.call('POST', `/api/v1/runs/${claim.run.id}/watch`, {
      json: { lease: claim.lease },
    });
    expect(anonymous.status).toBe(401);
    await parked(back, 0);
  });

  test('a process parks at most two watches of one run; a third is refused with 429 while they wait', async () => {
    const claim = await claimed();
    const first = watch(back, claim);
    const second = watch(back, claim);
    await parked(back, 2);
    const third = await watch(back, claim);
    expect(third.status).toBe(429);
    expect(third.json.error).toMatch(/has 2 watches parked on this control plane already/);
    await front.call('POST', `/api/v1/runs/${claim.run.id}/cancel`, { token: submitter, json: {} });
    expect((await first).json).toMatchObject({ cancel: true });
    expect((await second).json).toMatchObject({ cancel: true });
  });

  test('a control plane that shuts down answers its parked watches at once, with nothing to do', async () => {
    const claim = await claimed();
    const watching = watch(back, claim);
    await parked(back, 1);
    const closingAt = Date.now();
    const closed = back.close();
    const answer = await watching;
    await closed;
    expect(answer).toMatchObject({ status: 200, json: { cancel: false, reason: null, finishAs: null } });
    expect(answer.at - closingAt).toBeLessThan(SOONER_THAN_A_RECHECK_MS);
    // For afterEach to close.
    back = await startTestControlPlane({
      db: database.db,
      env: { FLUKSIO_QUEUE_PREFIX: front.settings.queuePrefix },
    });
  });
});
