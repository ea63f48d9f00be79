import { Queue } from 'bullmq';
import { eq, sql } from 'drizzle-orm';
import { expect, test } from 'vitest';
import {
  DELIVERY_JOB_OPTIONS,
  DELIVERY_QUEUE,
  type DeliveryJob,
} from '../../app/github/intake/delivery-queue.js';
import { dispatchDelivery } from '../../app/github/intake/dispatch-delivery.js';
import type { GitHubWork } from '../../app/github/github-work.js';
import { processDelivery } from '../../app/github/intake/process-delivery.js';
import { installations } from '../../schemas/tables/installations.js';
import { runs } from '../../schemas/tables/runs.js';
import { TEST_REDIS_URL } from '../app/control-plane-harness.js';
import { checkSuitePayload, installationPayload, pushPayload } from '../github/webhook-fixtures.js';
import { MAINTAINER, SHA, waitFor, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';
import { deliveryWork, leaveDeliveryToReconciler, storeDelivery, storedDeliveries } from './delivery-work.js';

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

/**
 * Stores a delivery as the webhook would and has a worker dispatch it once without
 * recording that it finished, as a worker that died before acknowledging its job; the
 * worker context, to process the delivery again.
 */
async function dispatchedOnce(delivery: { id: string; name: string; payload: unknown }): Promise<GitHubWork> {
  await storeDelivery(world, delivery);
  const row = (await storedDeliveries(world)).find((each) => each.id === delivery.id);
  if (!row) throw new Error(`delivery ${delivery.id} was not stored`);
  const work = deliveryWork(world);
  await dispatchDelivery(work, row);
  return work;
}

test('a signed delivery is stored with its payload and answered at once', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  const response = await world.send(push);
  expect(response.status).toBe(200);
  const [stored] = await storedDeliveries(world);
  expect(stored).toMatchObject({
    id: push.id,
    event: 'push',
    action: null,
    installationId: world.repo.installationId,
  });
  expect(stored?.payload).toEqual(JSON.parse(JSON.stringify(push.payload)));
  const processed = await world.settled(push.id);
  expect(processed).toMatchObject({ attempts: 1, lastError: null, failedAt: null });
});

test('one delivery sent five times at once is stored once and makes one run', async () => {
  const comment = world.comment('/fluksio run lr=0.1');
  const responses = await Promise.all(Array.from({ length: 5 }, () => world.send(comment)));
  expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
  await world.settled(comment.id);
  // Late copies must have changed nothing either.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await storedDeliveries(world)).toHaveLength(1);
  expect(await world.runs()).toHaveLength(1);
  expect(world.replies()).toHaveLength(1);
});

test('a wrong signature is answered 4xx and nothing is stored', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  const response = await world.send(push, { badSignature: true });
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  expect(await storedDeliveries(world)).toEqual([]);
  const unsigned = await fetch(world.webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': push.id },
    body: JSON.stringify(push.payload),
  });
  expect(unsigned.status).toBeGreaterThanOrEqual(400);
  expect(unsigned.status).toBeLessThan(500);
  expect(await storedDeliveries(world)).toEqual([]);
});

test('a payload with fields missing fails visibly: logged with the delivery id, last_error naming the field', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  const payload = push.payload as unknown as Record<string, unknown>;
  delete payload.after;
  const row = await world.deliver(push);
  expect(row.processedAt).toBeNull();
  expect(row.failedAt).not.toBeNull();
  expect(row.attempts).toBe(1);
  expect(row.lastError).toContain('after: is missing');
  expect(world.logs()).toMatch(new RegExp(`"deliveryId":"${push.id}".*"msg":"delivery failed"`));
  expect(await world.runs()).toEqual([]);
});

test('a GitHub failure is recorded as the delivery’s last error and retried until it succeeds', async () => {
  world.double.failNext('GET /repos/{owner}/{repo}/pulls/{pull_number}', { status: 502 });
  const comment = world.comment('/fluksio run');
  await world.send(comment);
  await waitFor('the first failure', async () => {
    const [row] = await storedDeliveries(world);
    return row?.lastError ?? undefined;
  });
  const row = await world.settled(comment.id);
  expect(row).toMatchObject({ attempts: 2, lastError: null, failedAt: null });
  expect(await world.runs()).toHaveLength(1);
});

test('a worker killed after creating the runs, before acknowledging the job: processed again, still one run', async () => {
  const comment = world.comment('/fluksio run lr=0.1,0.2');
  // The first attempt does everything but record that it finished…
  const work = await dispatchedOnce(comment);
  expect(await world.runs()).toHaveLength(2);
  // …and the job, found stalled, runs again.
  expect(await processDelivery(work, { deliveryId: comment.id })).toBe('processed');
  expect((await world.runs()).map((run) => run.triggerKey)).toEqual([
    `delivery:${comment.id}:0`,
    `delivery:${comment.id}:1`,
  ]);
  expect(await world.checks()).toHaveLength(2);
  expect(await processDelivery(work, { deliveryId: comment.id })).toBe('skipped');
});

test('a sweep processed again after its worker died midway queues the rest at the head it was pinned to, though the pull request moved', async () => {
  const comment = world.comment('/fluksio run lr=0.1,0.2');
  const work = await dispatchedOnce(comment);
  // As if the worker died after queueing the first run only; then the pull request moves.
  const [, second] = await world.runs();
  await world.db.delete(runs).where(eq(runs.id, second?.id ?? ''));
  world.setHead(SHA.newHead);
  expect(await processDelivery(work, { deliveryId: comment.id })).toBe('processed');
  expect((await world.runs()).map((run) => [run.triggerKey, run.commit])).toEqual([
    [`delivery:${comment.id}:0`, SHA.head],
    [`delivery:${comment.id}:1`, SHA.head],
  ]);
});

test('“Re-run all checks” processed again after a worker died re-runs each check run once', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1,0.2'));
  const sweep = await world.runs();
  const press = checkSuitePayload({
    repo: world.repo,
    action: 'rerequested',
    headSha: SHA.head,
    sender: MAINTAINER,
  });
  const work = await dispatchedOnce(press);
  // The re-runs of the first attempt are now the newest runs of their check runs.
  expect(await processDelivery(work, { deliveryId: press.id })).toBe('processed');
  const again = (await world.runs()).slice(sweep.length);
  expect(again.map((run) => run.triggerKey).sort()).toEqual(
    sweep.map((run) => `delivery:${press.id}:${run.id}`).sort(),
  );
  expect(again.map((run) => run.params)).toEqual(sweep.map((run) => run.params));
});

test('the reconciler processes a stored delivery whose job was lost', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  await storeDelivery(world, push);
  await leaveDeliveryToReconciler(world, push.id);
  const row = await world.settled(push.id);
  expect(row.processedAt).not.toBeNull();
  expect(await world.runs()).toMatchObject([{ commit: SHA.main, trigger: 'push' }]);
});

test('a delivery whose last attempt met the database down is processed by the reconciler once it is back', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', after: SHA.main });
  await storeDelivery(world, push);
  // The database refuses every write to the delivery: neither the attempt nor its failure
  // can be recorded, as when it fails over during the delivery's last attempt.
  await world.db.execute(
    sql.raw(`create function refuse_delivery_writes() returns trigger language plpgsql
    as $$ begin raise exception 'the database is failing over'; end $$`),
  );
  await world.db.execute(
    sql.raw(`create trigger refuse_delivery_writes before update on deliveries
    for each row execute function refuse_delivery_writes()`),
  );
  const queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, {
    connection: { url: TEST_REDIS_URL },
    prefix: world.settings.queuePrefix,
  });
  try {
    // The job's last attempt (of its eight; here its only one) fails unrecorded.
    await queue.add(
      'delivery',
      { deliveryId: push.id },
      { ...DELIVERY_JOB_OPTIONS, jobId: push.id, attempts: 1 },
    );
    await waitFor('the job to fail', async () => (await (await queue.getJob(push.id))?.isFailed()) === true);
  } finally {
    await world.db.execute(sql.raw('drop trigger refuse_delivery_writes on deliveries'));
    await world.db.execute(sql.raw('drop function refuse_delivery_writes'));
    await queue.close();
  }
  const [stored] = await storedDeliveries(world);
  expect(stored).toMatchObject({ processedAt: null, failedAt: null, attempts: 0 });
  // The database is back; the reconciler takes deliveries older than ten seconds.
  await leaveDeliveryToReconciler(world, push.id);
  const row = await world.settled(push.id);
  expect(row).toMatchObject({ failedAt: null, lastError: null });
  expect(row.processedAt).not.toBeNull();
  expect(await world.runs()).toMatchObject([{ commit: SHA.main, trigger: 'push' }]);
});

test('installation events keep the installations table', async () => {
  const account = { login: 'acme' };
  await world.deliver(installationPayload({ action: 'created', installationId: 777_000_000_001, account }));
  expect(await world.db.select().from(installations)).toMatchObject([
    { id: 777_000_000_001, owner: 'acme', suspended: false },
  ]);
  await world.deliver(installationPayload({ action: 'suspend', installationId: 777_000_000_001, account }));
  expect(await world.db.select().from(installations)).toMatchObject([{ suspended: true }]);
  await world.deliver(installationPayload({ action: 'deleted', installationId: 777_000_000_001, account }));
  expect(await world.db.select().from(installations)).toEqual([]);
});
