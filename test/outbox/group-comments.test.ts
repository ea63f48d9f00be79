import { monotonicFactory } from 'ulid';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { groupMarker } from '../../app/github/render/render-group-comment.js';
import type { Run } from '../../schemas/tables/runs.js';
import { recordGroupComment } from '../../store/outbox/record-group-comment.js';
import { findGroupComment } from '../../store/outbox/find-group-comment.js';
import {
  closeOutboxDatabase,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';

const CREATE_COMMENT = 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments';
const PR = 7;
const nextUlid = monotonicFactory();

let world: OutboxWorld;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

/** A queued sweep `lr=0.1,0.01 seed=1` on pull request 7 with its comment recorded. */
async function queueSweep(): Promise<{ groupId: string; runs: Run[] }> {
  const groupId = nextUlid();
  const runs = await Promise.all(
    [0.1, 0.01].map((lr, groupIndex) =>
      world.queueRun({
        groupId,
        groupIndex,
        params: { lr, seed: 1 },
        paramsDigest: `lr-${lr}`,
        prNumber: PR,
        trigger: 'comment',
        metricGoals: { accuracy: { goal: 'max' } },
        checkName: `fluksio (lr=${lr})`,
      }),
    ),
  );
  await recordGroupComment({
    db: world.db,
    group: { groupId, installationId: world.installationId, repository: world.repository, prNumber: PR },
  });
  return { groupId, runs };
}

describe('a sweep’s comment', () => {
  test('is created once when the group is queued, even after a lost response, and edited as runs finish', async () => {
    world.double.addComment(world.repository, PR, { body: '/fluksio run lr=0.1,0.01 seed=1' });
    world.double.failNext(CREATE_COMMENT, { dropAfterApplying: true });
    const outbox = await world.openOutbox();
    const { groupId, runs } = await queueSweep();
    await outbox.notifyGroup(groupId);

    const marked = () =>
      world.double
        .comments(world.repository, PR)
        .filter((comment) => comment.body.startsWith(groupMarker(groupId)));
    await waitFor('the comment, sent', async () => {
      const row = await findGroupComment({ db: world.db, groupId });
      return row?.sentVersion === row?.renderVersion && row?.commentId !== null;
    });
    expect(marked()).toHaveLength(1);
    expect(marked()[0]?.body).toContain('0 of 2 runs finished');
    expect((await findGroupComment({ db: world.db, groupId }))?.commentId).toBe(marked()[0]?.id);

    const [first, second] = runs as [Run, Run];
    // A run's notify edits its sweep's comment as the run finishes, not while it runs.
    const editsBefore = marked()[0]?.previousBodies.length;
    await world.updateRun(first.id, { status: 'running', startedAt: new Date() });
    await outbox.notifyRun(first.id);
    await waitFor(
      'its check run in progress',
      () => world.checkRunsOf(first.id)[0]?.status === 'in_progress',
    );
    expect(marked()[0]?.previousBodies.length).toBe(editsBefore);
    await world.updateRun(first.id, finished('succeeded', { metrics: { accuracy: 0.81 } }));
    await outbox.notifyRun(first.id);
    await waitFor('one finished', () => marked()[0]?.body.includes('1 of 2 runs finished'));
    await world.updateRun(second.id, finished('succeeded', { metrics: { accuracy: 0.86 } }));
    await outbox.notifyRun(second.id);
    await waitFor('both finished', () => marked()[0]?.body.includes('2 of 2 runs finished'));

    const [comment] = marked();
    expect(comment?.body).toContain('**0.86** 🏆');
    expect(comment?.body).not.toContain('| seed');
    expect(
      world.double.requests.filter((request) => `${request.method} ${request.route}` === CREATE_COMMENT),
    ).toHaveLength(1);
    expect(world.double.comments(world.repository, PR)).toHaveLength(2);
  });

  test('is never someone else’s comment that carries the marker: the App writes its own', async () => {
    const outbox = await world.openOutbox();
    const { groupId } = await queueSweep();
    // Anyone may comment on a pull request, and a group's id is in its page links and
    // in its comment's marker (a comment deleted, then looked for again).
    const planted = world.double.addComment(world.repository, PR, {
      body: `${groupMarker(groupId)}\nAll runs passed, merge away.`,
      user: { login: 'forker' },
    });
    await outbox.notifyGroup(groupId);
    const row = await waitFor('the comment, sent', async () => {
      const found = await findGroupComment({ db: world.db, groupId });
      return found && found.sentVersion === found.renderVersion && found.commentId !== null
        ? found
        : undefined;
    });
    expect(row.commentId).not.toBe(planted.id);
    expect(planted.body).toBe(`${groupMarker(groupId)}\nAll runs passed, merge away.`);
    expect(planted.previousBodies).toEqual([]);
  });
});
