import { expect, test } from 'vitest';
import { MAINTAINER, PR, SHA, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

test('/fluksio run lr=0.1 gets 👀 and 🚀 and queues one run at the pull request head, with its check run row', async () => {
  const comment = world.comment('/fluksio run lr=0.1');
  const delivery = await world.deliver(comment);
  expect(delivery.lastError).toBeNull();

  const [run, ...others] = await world.runs();
  expect(others).toEqual([]);
  expect(run).toMatchObject({
    repository: world.repo.fullName,
    commit: SHA.head,
    params: { lr: 0.1, seed: 0 },
    status: 'queued',
    labels: ['gpu'],
    trustDomain: 'trusted',
    fork: false,
    fetchRef: `refs/pull/${PR}/head`,
    trigger: 'comment',
    automatic: false,
    prNumber: PR,
    installationId: world.repo.installationId,
    checkName: 'fluksio',
    baseRef: 'main',
    retries: 1,
    timeoutMs: 2 * 3_600_000,
    metricGoals: { accuracy: { goal: 'max' } },
    triggerKey: `delivery:${comment.id}:0`,
    submittedBy: MAINTAINER.login,
    cloneUrl: `https://github.com/${world.repo.fullName}.git`,
  });
  expect(await world.checks()).toMatchObject([
    { runId: run?.id, installationId: world.repo.installationId, headSha: SHA.head, name: 'fluksio' },
  ]);
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'rocket']);
  const [reply] = world.replies();
  expect(reply).toContain('🚀 Queued 1 run');
  expect(reply).toContain(run?.id);
});

test('a push after the command was handled does not change the commit its run executes', async () => {
  await world.deliver(world.comment('/fluksio run'));
  world.setHead(SHA.newHead);
  const { pullRequestPayload } = await import('../github/webhook-fixtures.js');
  await world.deliver(
    pullRequestPayload({
      repo: world.repo,
      action: 'synchronize',
      number: PR,
      head: { sha: SHA.newHead, ref: 'feature' },
      base: { sha: SHA.main, ref: 'main' },
    }),
  );
  const runs = await world.runs();
  const byComment = runs.find((run) => run.trigger === 'comment');
  expect(byComment).toMatchObject({ commit: SHA.head, status: 'queued' });
  // The push's own automatic run is at the new head.
  expect(runs.find((run) => run.trigger === 'pull_request')).toMatchObject({
    commit: SHA.newHead,
    automatic: true,
  });
});

test('--sha naming the old head after a push is refused with a reply naming the current head', async () => {
  world.setHead(SHA.newHead);
  const comment = world.comment(`/fluksio run --sha ${SHA.head.slice(0, 10)} lr=0.1`);
  await world.deliver(comment);
  expect(await world.runs()).toEqual([]);
  const [reply] = world.replies();
  expect(reply).toContain(SHA.newHead);
  expect(reply).toContain(`/fluksio run --sha ${SHA.newHead}`);
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'confused']);
});

test('--sha naming the current head runs exactly it', async () => {
  await world.deliver(world.comment(`/fluksio run --sha ${SHA.head.slice(0, 7)}`));
  expect((await world.runs()).map((run) => run.commit)).toEqual([SHA.head]);
});

test('a commenter with read permission gets a reply and 😕, and nothing runs', async () => {
  world.double.setPermission(world.repo.fullName, 'visitor', 'read');
  const comment = world.comment('/fluksio run lr=0.1', { user: { login: 'visitor' } });
  await world.deliver(comment);
  expect(await world.runs()).toEqual([]);
  expect(world.replies()).toHaveLength(1);
  expect(world.replies()[0]).toMatch(/@visitor does not have write permission/);
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'confused']);
});

test("a bot's comment and an edited comment get nothing at all", async () => {
  const bot = world.comment('/fluksio run', { user: { login: 'renovate[bot]', type: 'Bot' } });
  // A payload that does not type its user as a Bot still names one by its login.
  const untyped = world.comment('/fluksio run', { user: { login: 'helper[bot]' } });
  world.double.setPermission(world.repo.fullName, 'helper[bot]', 'write');
  const edited = world.comment('/fluksio run', { action: 'edited' });
  await world.deliver(bot);
  await world.deliver(untyped);
  await world.deliver(edited);
  expect(await world.runs()).toEqual([]);
  expect(world.replies().filter((reply) => !reply.startsWith('<!-- fluksio:group:'))).toEqual([]);
  expect(world.reactions(bot.payload.comment.id)).toEqual([]);
  expect(world.reactions(untyped.payload.comment.id)).toEqual([]);
  expect(world.reactions(edited.payload.comment.id)).toEqual([]);
});

test('a comment that is no command is not answered', async () => {
  const comment = world.comment('Looks good to me. We could /fluksio run it later.');
  await world.deliver(comment);
  expect(world.replies().filter((reply) => !reply.startsWith('<!-- fluksio:group:'))).toEqual([]);
  expect(world.reactions(comment.payload.comment.id)).toEqual([]);
});

test.each([
  ['/fluksio run lr=fast', `Parameter 'lr': "fast" is not a float`],
  ['/fluksio run nosuch=1', `Unknown parameter 'nosuch'; the pipeline declares: lr, seed`],
  [
    `/fluksio run lr=0.1\n${'x'.repeat(10_000)}`,
    'fluksio reads commands from comments of at most 10,000 characters',
  ],
  ['/fluksio run lr=1,2,3,4,5,6 seed=1,2,3,4,5,6', 'a sweep is at most 32 runs'],
  ['/fluksio frobnicate', "Unknown command 'frobnicate'"],
])('%s: a reply naming the problem and the valid params, 😕, and no run', async (body, problem) => {
  const comment = world.comment(body);
  await world.deliver(comment);
  expect(await world.runs()).toEqual([]);
  const [reply, ...more] = world.replies();
  expect(more).toEqual([]);
  expect(reply).toContain(problem);
  expect(reply).toContain('lr (float, default 0.01, min 0)');
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'confused']);
});

test('a broken fluksio.yml at the head: a reply naming every problem, an action_required notice, no run', async () => {
  world.double.setFile(
    world.repo.fullName,
    SHA.broken,
    'fluksio.yml',
    'version: 1\nstages:\n  train:\n    cmd: python t.py ${lr}\n',
  );
  world.setHead(SHA.broken);
  const comment = world.comment('/fluksio run');
  await world.deliver(comment);
  expect(await world.runs()).toEqual([]);
  expect(world.replies()[0]).toContain('${lr} is not a declared param');
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'confused']);
  expect(await world.notices()).toMatchObject([
    {
      id: `broken-pipeline:${world.repo.fullName}:${SHA.broken}`,
      kind: 'broken-pipeline',
      headSha: SHA.broken,
    },
  ]);
});

test('/fluksio help replies with the grammar and the params, and queues nothing', async () => {
  const comment = world.comment('/fluksio help');
  await world.deliver(comment);
  expect(await world.runs()).toEqual([]);
  expect(world.replies()[0]).toContain('/fluksio run [key=value ...]');
  expect(world.replies()[0]).toContain('seed (int, default 0)');
  expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes']);
});

test('a sweep is one group of runs, one check run each, named by its swept params, and one group comment', async () => {
  const command = world.comment('/fluksio run lr=0.1,0.01 seed=1,2');
  await world.deliver(command);
  const runs = await world.runs();
  expect(runs.map((run) => [run.params, run.groupIndex, run.checkName])).toEqual([
    [{ lr: 0.1, seed: 1 }, 0, 'fluksio (lr=0.1, seed=1)'],
    [{ lr: 0.1, seed: 2 }, 1, 'fluksio (lr=0.1, seed=2)'],
    [{ lr: 0.01, seed: 1 }, 2, 'fluksio (lr=0.01, seed=1)'],
    [{ lr: 0.01, seed: 2 }, 3, 'fluksio (lr=0.01, seed=2)'],
  ]);
  expect(new Set(runs.map((run) => run.groupId)).size).toBe(1);
  expect((await world.checks()).map((check) => check.name).sort()).toEqual(
    runs.map((run) => run.checkName).sort(),
  );
  const { groupComments } = await import('../../schemas/tables/group-comments.js');
  expect(await world.db.select().from(groupComments)).toMatchObject([
    { groupId: runs[0]?.groupId, prNumber: PR, repository: world.repo.fullName },
  ]);
  // The group comment is the command's one answer: no "queued" reply beside it.
  expect(world.replies().filter((reply) => !reply.startsWith('<!-- fluksio:group:'))).toEqual([]);
  expect(world.reactions(command.payload.comment.id)).toEqual(['eyes', 'rocket']);
});

test('/fluksio cancel cancels only this pull request’s runs; /fluksio cancel <id> only that one', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1'));
  await world.deliver(world.comment('/fluksio run lr=0.2'));
  const [first, second] = await world.runs();
  // A run of another pull request of the same repository is not this pull request's.
  const { runs: runsTable } = await import('../../schemas/tables/runs.js');
  const { eq } = await import('drizzle-orm');
  await world.db
    .update(runsTable)
    .set({ prNumber: PR + 1 })
    .where(eq(runsTable.id, String(second?.id)));
  await world.deliver(world.comment(`/fluksio cancel ${String(second?.id)}`));
  expect(world.replies().at(-1)).toContain('names no queued or running run of this pull request');

  await world.deliver(world.comment('/fluksio cancel'));
  const after = await world.runs();
  expect(after.find((run) => run.id === first?.id)?.status).toBe('cancelled');
  expect(after.find((run) => run.id === second?.id)?.status).toBe('queued');
  expect(world.replies().at(-1)).toContain(`Cancelled 1 run`);
});
