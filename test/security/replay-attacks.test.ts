import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { deliveries } from '../../schemas/tables/deliveries.js';
import {
  checkRunPayload,
  issueCommentPayload,
  pullRequestPayload,
  pushPayload,
} from '../github/webhook-fixtures.js';
import type { WebhookDelivery } from '../github/webhook-fixtures.js';
import { MAINTAINER, PR, SHA, waitFor, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { gitHubAppWorldPerTest } from '../app-github/github-app-world-per-test.js';
import { storeDeliveryOutOfAttempts } from '../app-github/delivery-work.js';

// Replays of a captured delivery (DESIGN §8, "never twice"): GitHub signs the body and not
// X-GitHub-Delivery, so anyone holding one signed body can send it again under a fresh id.

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

/** The same signed body under a fresh `X-GitHub-Delivery`, answered 200 like any copy. */
async function replay(delivery: WebhookDelivery): Promise<string> {
  const id = randomUUID();
  const response = await world.send({ ...delivery, id });
  expect(response.status).toBe(200);
  return id;
}

/** The stored deliveries' ids, settled (processed or given up on). */
async function settledDeliveries(): Promise<string[]> {
  const rows = await world.db.select({ id: deliveries.id }).from(deliveries);
  for (const row of rows) await world.settled(row.id);
  return rows.map((row) => row.id).sort();
}

test('a `/fluksio run` comment replayed under a fresh delivery id makes no second run and no second reply', async () => {
  const comment = world.comment('/fluksio run lr=0.1');
  await world.deliver(comment);
  await replay(comment);
  await replay(comment);
  expect(await settledDeliveries()).toEqual([comment.id]);
  expect(await world.runs()).toHaveLength(1);
  expect(world.replies()).toHaveLength(1);
  expect(world.logs()).toMatch(
    new RegExp(`"copyOf":"${comment.id}".*"msg":"a delivery stored already came again under another id`),
  );
});

test('replayed at once, many times over, a comment still makes one run', async () => {
  const comment = world.comment('/fluksio run');
  const original = world.send(comment);
  await Promise.all(Array.from({ length: 7 }, () => replay(comment)));
  expect((await original).status).toBe(200);
  // Whichever copy was stored first is the delivery; the others are it.
  expect(await settledDeliveries()).toHaveLength(1);
  expect(await world.runs()).toHaveLength(1);
});

test('a synchronize replayed under a fresh id, after its run was cancelled, runs the head no second time', async () => {
  const synchronize = pullRequestPayload({
    repo: world.repo,
    action: 'synchronize',
    number: PR,
    head: { sha: SHA.head, ref: 'feature' },
    base: { sha: SHA.main, ref: 'main' },
  });
  await world.deliver(synchronize);
  expect(await world.runs()).toMatchObject([{ automatic: true, commit: SHA.head }]);
  // No automatic run of the head is queued or running any more: only the key can tell.
  await world.deliver(world.comment('/fluksio cancel'));
  expect(await world.runs()).toMatchObject([{ status: 'cancelled' }]);
  await replay(synchronize);
  await settledDeliveries();
  expect(await world.runs()).toHaveLength(1);
});

test('a push replayed under a fresh id runs the pushed commit no second time', async () => {
  const push = pushPayload({ repo: world.repo, ref: 'main', before: SHA.head, after: SHA.main });
  await world.deliver(push);
  await replay(push);
  expect(await settledDeliveries()).toEqual([push.id]);
  expect(await world.runs()).toHaveLength(1);
});

test('a re-run button press replayed makes one re-run; another press makes another', async () => {
  await world.deliver(world.comment('/fluksio run'));
  const [original] = await world.runs();
  const press = () =>
    checkRunPayload({
      repo: world.repo,
      action: 'requested_action',
      identifier: 'rerun',
      externalId: String(original?.id),
      headSha: SHA.head,
      sender: MAINTAINER,
    });
  const first = press();
  await world.deliver(first);
  await replay(first);
  await settledDeliveries();
  expect(await world.runs()).toHaveLength(2);
  // GitHub's next press is another body (another check run, the suite's new state).
  await world.deliver(press());
  expect((await world.runs()).map((run) => run.trigger)).toEqual(['comment', 'rerun', 'rerun']);
});

test('a new comment with the same text is a new command: each makes a run', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1'));
  await world.deliver(world.comment('/fluksio run lr=0.1'));
  expect((await world.runs()).map((run) => run.params)).toEqual([
    { lr: 0.1, seed: 0 },
    { lr: 0.1, seed: 0 },
  ]);
  expect(world.replies()).toHaveLength(2);
});

test('an edit of a command comment is its own delivery, not taken for a replay, and (DESIGN §8) runs nothing', async () => {
  const created = world.comment('/fluksio run lr=0.1');
  await world.deliver(created);
  const edited = issueCommentPayload({
    repo: world.repo,
    number: PR,
    body: '/fluksio run lr=0.2',
    user: MAINTAINER,
    action: 'edited',
    previousBody: '/fluksio run lr=0.1',
    commentId: created.payload.comment.id,
  });
  const row = await world.deliver(edited);
  expect(row.processedAt).not.toBeNull();
  expect(await settledDeliveries()).toEqual([created.id, edited.id].sort());
  expect(await world.runs()).toHaveLength(1);
});

test('a delivery given up on makes its run when its body comes again under any id, and never a second', async () => {
  const comment = world.comment('/fluksio run');
  // Its workers died sixteen times: the next attempt gives it up, before it made its run.
  await storeDeliveryOutOfAttempts(world, comment);
  expect((await world.deliver(comment)).failedAt).not.toBeNull();
  expect(await world.runs()).toEqual([]);

  await replay(comment);
  expect(await processedAgain(comment.id)).toMatchObject({ failedAt: null, lastError: null });
  expect(await settledDeliveries()).toEqual([comment.id]);
  expect(await world.runs()).toHaveLength(1);

  // Given up on after it made its run (what came after kept failing), then replayed: one run still.
  await world.db
    .update(deliveries)
    .set({ processedAt: null, failedAt: sql`now()`, lastError: 'given up' })
    .where(eq(deliveries.id, comment.id));
  await replay(comment);
  await processedAgain(comment.id);
  expect(await world.runs()).toHaveLength(1);
});

/** Waits until a delivery reopened by a copy was processed to the end. */
function processedAgain(deliveryId: string) {
  return waitFor(`delivery ${deliveryId} to be processed again`, async () => {
    const [row] = await world.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    return row && row.failedAt === null && row.processedAt !== null ? row : undefined;
  });
}
