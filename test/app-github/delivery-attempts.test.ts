import { eq, sql } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { dispatchDelivery } from '../../app/github/intake/dispatch-delivery.js';
import { DELIVERY_MAX_ATTEMPTS, processDelivery } from '../../app/github/intake/process-delivery.js';
import { deliveries } from '../../schemas/tables/deliveries.js';
import { beginDeliveryAttempt } from '../../store/deliveries/begin-delivery-attempt.js';
import { listUnprocessedDeliveries } from '../../store/deliveries/list-unprocessed-deliveries.js';
import { recordDeliveryFailure } from '../../store/deliveries/record-delivery-failure.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { openGitHubAppWorld, SHA, waitFor, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';
import {
  deliveryWork,
  leaveDeliveryToReconciler,
  storeDelivery,
  storeDeliveryLeftToTest,
  storeDeliveryOutOfAttempts,
  storedDeliveries,
} from './delivery-work.js';

// A delivery's attempts, across crashes, hung requests and GitHub's Redeliver: given up
// on after sixteen, reopened by a redelivery, never hung on GitHub, never replying twice
// (intake.test.ts has the intake itself).

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

test('a delivery that fails every time is given up on after 16 attempts, its last error kept, and never tried again', async () => {
  const comment = world.comment('/fluksio run');
  await storeDeliveryLeftToTest(world, comment);
  world.double.failNext('GET /repos/{owner}/{repo}/pulls/{pull_number}', { status: 502, times: 17 });
  const work = deliveryWork(world);
  for (let attempt = 1; attempt <= 16; attempt += 1) {
    await expect(processDelivery(work, { deliveryId: comment.id })).rejects.toThrow();
    const [row] = await storedDeliveries(world);
    expect(row).toMatchObject({ attempts: attempt, processedAt: null });
    expect(row?.failedAt === null).toBe(attempt < 16);
  }
  const [row] = await storedDeliveries(world);
  expect(row?.lastError).toContain('Server Error');
  // Not tried again: neither by a job nor by the reconciler.
  expect(await processDelivery(work, { deliveryId: comment.id })).toBe('skipped');
  expect(world.double.pendingFaults()).toBe(1);
  expect(await listUnprocessedDeliveries({ db: world.db, olderThanMs: -7_200_000, limit: 10 })).toEqual([]);
  expect((await storedDeliveries(world))[0]).toMatchObject({ attempts: 16 });
  expect(DELIVERY_MAX_ATTEMPTS).toBe(16);
});

test('a delivery begun 16 times that never finished (its worker died each time) is given up on, saying so', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  await storeDelivery(world, push);
  // Sixteen workers began it and died, one after recording an error.
  for (let attempt = 1; attempt <= 16; attempt += 1) {
    await beginDeliveryAttempt({ db: world.db, deliveryId: push.id, maxAttempts: DELIVERY_MAX_ATTEMPTS });
    if (attempt === 3)
      await recordDeliveryFailure({
        db: world.db,
        deliveryId: push.id,
        error: 'GitHub answered 502',
        givingUp: false,
      });
  }
  await leaveDeliveryToReconciler(world, push.id);
  const row = await world.settled(push.id);
  expect(row).toMatchObject({ attempts: 16, processedAt: null });
  expect(row.failedAt).not.toBeNull();
  expect(row.lastError).toBe(
    'Given up: processing was begun 16 times and never finished (its worker died or hung); the last error: GitHub answered 502',
  );
  expect(world.logs()).toMatch(new RegExp(`"deliveryId":"${push.id}".*"msg":"delivery given up"`));
  expect(await world.runs()).toEqual([]);
});

test('GitHub’s Redeliver of a delivery given up on processes it again; of one processed, changes nothing', async () => {
  const comment = world.comment('/fluksio run');
  await storeDeliveryOutOfAttempts(world, comment);
  const givenUp = await world.deliver(comment);
  expect(givenUp.failedAt).not.toBeNull();
  expect(world.replies()).toEqual([]);

  // Someone presses Redeliver: the same X-GitHub-Delivery, the same payload.
  expect((await world.send(comment)).status).toBe(200);
  const [reopened] = await storedDeliveries(world);
  expect(reopened).toMatchObject({ failedAt: null, lastError: null });
  const processed = await world.settled(comment.id);
  expect(processed).toMatchObject({ attempts: 2, failedAt: null, lastError: null });
  expect(processed.processedAt).not.toBeNull();
  expect(await world.runs()).toHaveLength(1);
  expect(world.replies()).toHaveLength(1);
  expect(world.logs()).toMatch(
    new RegExp(`"deliveryId":"${comment.id}".*"msg":"delivery given up on was redelivered`),
  );

  // Redelivered once processed: still deduplicated.
  expect((await world.send(comment)).status).toBe(200);
  expect(await storedDeliveries(world)).toEqual([processed]);
  expect(await world.runs()).toHaveLength(1);
});

test('a request GitHub holds open fails after FLUKSIO_GITHUB_TIMEOUT, saying which, and the delivery is retried', async () => {
  await world.close();
  world = await openGitHubAppWorld({ env: { FLUKSIO_GITHUB_TIMEOUT: '2s' } });
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  world.double.failNext('GET /repos/{owner}/{repo}/pulls/{pull_number}', { answerAfter: held });
  try {
    const comment = world.comment('/fluksio run');
    await world.send(comment);
    const error = await waitFor('the first attempt to time out', async () => {
      const [row] = await storedDeliveries(world);
      return row?.lastError ?? undefined;
    });
    expect(error).toBe(
      `GitHub did not answer GET /repos/${world.repo.fullName}/pulls/7: it timed out after 2 s`,
    );
    const row = await world.settled(comment.id);
    expect(row).toMatchObject({ attempts: 2, lastError: null, failedAt: null });
    expect(await world.runs()).toHaveLength(1);
  } finally {
    release();
  }
});

test('Redeliver of a delivery given up on after it replied does not reply again', async () => {
  const comment = world.comment('/fluksio run');
  await storeDeliveryLeftToTest(world, comment);
  // Its first attempt replies and queues the run; then it is given up on, never recorded processed.
  const begun = await beginDeliveryAttempt({ db: world.db, deliveryId: comment.id, maxAttempts: 16 });
  if (begun?.state !== 'begun') throw new Error('the first attempt did not begin');
  await dispatchDelivery(deliveryWork(world), begun.delivery);
  expect(world.replies()).toHaveLength(1);
  await world.db
    .update(deliveries)
    .set({ failedAt: sql`now()`, attempts: 16, lastError: 'Given up' })
    .where(eq(deliveries.id, comment.id));

  // Someone presses Redeliver: processed again, and the reply it made already is found.
  expect((await world.send(comment)).status).toBe(200);
  const processed = await world.settled(comment.id);
  expect(processed.processedAt).not.toBeNull();
  expect(world.replies()).toHaveLength(1);
  expect(await world.runs()).toHaveLength(1);
});

test('a retry after a worker died between replying and recording does not reply again', async () => {
  const run = world.comment('/fluksio run');
  const help = world.comment('/fluksio help');
  const work = deliveryWork(world);
  for (const delivery of [run, help]) {
    await storeDeliveryLeftToTest(world, delivery);
  }
  // The run command's first attempt replies; its worker dies before the delivery is recorded processed.
  const begun = await beginDeliveryAttempt({ db: world.db, deliveryId: run.id, maxAttempts: 16 });
  if (begun?.state !== 'begun') throw new Error('the first attempt did not begin');
  await dispatchDelivery(work, begun.delivery);
  expect(world.replies()).toEqual([
    expect.stringMatching(new RegExp(`\\n<!-- fluksio-reply: ${run.id} -->$`)),
  ]);

  expect(await processDelivery(work, { deliveryId: run.id })).toBe('processed');
  const posts = () =>
    world.double.requests.filter(
      (request) =>
        request.method === 'POST' && request.route === '/repos/{owner}/{repo}/issues/{issue_number}/comments',
    );
  expect(posts()).toHaveLength(1);
  expect(await world.runs()).toHaveLength(1);

  // Another delivery's retry, whose first attempt died before replying, still replies.
  await beginDeliveryAttempt({ db: world.db, deliveryId: help.id, maxAttempts: 16 });
  expect(await processDelivery(work, { deliveryId: help.id })).toBe('processed');
  expect(posts()).toHaveLength(2);
  expect(world.replies()[1]).toContain(`<!-- fluksio-reply: ${help.id} -->`);
});
