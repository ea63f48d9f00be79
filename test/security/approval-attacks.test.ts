import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { deliveries } from '../../schemas/tables/deliveries.js';
import { issueCommentPayload, pullRequestPayload } from '../github/webhook-fixtures.js';
import { MAINTAINER, PR, SHA, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { gitHubAppWorldPerTest } from '../app-github/github-app-world-per-test.js';

// Attacks on "never a run of code nobody approved" (DESIGN §8), from outside the repository.

const FORK_ID = 4_242_424;

let world: GitHubAppWorld;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });

test('a fork’s author, a contributor or a stranger approving the fork’s own head runs nothing', async () => {
  world.setHead(SHA.forkHead, { forkId: FORK_ID });
  world.double.setPermission(world.repo.fullName, 'contributor', 'read');
  for (const login of ['forker', 'contributor', 'stranger']) {
    await world.deliver(world.comment(`/fluksio run --sha ${SHA.forkHead}`, { user: { login } }));
  }
  expect(await world.runs()).toEqual([]);
  expect(world.replies()).toHaveLength(3);
  for (const reply of world.replies()) expect(reply).toMatch(/does not have write permission/);
});

test('a comment edited into an approval, by anyone, runs nothing and is not answered', async () => {
  world.setHead(SHA.forkHead, { forkId: FORK_ID });
  const edits = [
    world.comment(`/fluksio run --sha ${SHA.forkHead}`, { user: { login: 'forker' }, action: 'edited' }),
    world.comment(`/fluksio run --sha ${SHA.forkHead}`, { action: 'edited' }),
  ];
  for (const edit of edits) await world.deliver(edit);
  expect(await world.runs()).toEqual([]);
  expect(world.replies()).toEqual([]);
  expect(world.double.reactions(world.repo.fullName)).toEqual([]);
});

test('the maintainer approves commit A; the fork pushes B before the command is handled: nothing runs', async () => {
  world.setHead(SHA.newHead, { forkId: FORK_ID });
  await world.deliver(world.comment(`/fluksio run --sha ${SHA.forkHead}`));
  expect(await world.runs()).toEqual([]);
  expect(world.replies()[0]).toContain(`/fluksio run --sha ${SHA.newHead}`);
});

test('a synchronize of a fork whose head repository is gone never runs automatically', async () => {
  world.setHead(SHA.newHead, { forkId: null });
  await world.deliver(
    pullRequestPayload({
      repo: world.repo,
      action: 'synchronize',
      number: PR,
      head: { sha: SHA.newHead, ref: 'feature', repoId: null },
      base: { sha: SHA.main, ref: 'main' },
    }),
  );
  expect(await world.runs()).toEqual([]);
  expect((await world.notices()).map((notice) => notice.kind)).toEqual(['approval']);
});

test('a command on an issue, or hidden in HTML, a details block or a code fence, is no command', async () => {
  const hidden = [
    '<!--\n/fluksio run\n-->',
    '<!-- /fluksio run -->',
    '<details><summary>logs</summary>\n\n/fluksio run\n</details>',
    '```\n/fluksio run\n```',
    '\u200b/fluksio run',
  ];
  for (const body of hidden) await world.deliver(world.comment(body));
  await world.deliver(
    issueCommentPayload({
      repo: world.repo,
      number: PR,
      body: '/fluksio run',
      user: MAINTAINER,
      isPullRequest: false,
    }),
  );
  expect(await world.runs()).toEqual([]);
  expect(world.replies()).toEqual([]);
  expect(world.double.reactions(world.repo.fullName)).toEqual([]);
});

test('a delivery sent again, under its own id or another, after the commenter lost write: no second run', async () => {
  const comment = world.comment('/fluksio run');
  await world.deliver(comment);
  expect(await world.runs()).toHaveLength(1);
  world.double.setPermission(world.repo.fullName, MAINTAINER.login, 'read');
  expect((await world.send(comment)).status).toBe(200);
  // The same signed body under another id is the delivery stored already: nothing new is stored.
  expect((await world.send({ ...comment, id: randomUUID() })).status).toBe(200);
  expect(await world.db.select().from(deliveries)).toHaveLength(1);
  expect(await world.runs()).toHaveLength(1);
});

test('a delivery with a bad or no signature is refused before anything is stored or run', async () => {
  const comment = world.comment('/fluksio run');
  expect((await world.send(comment, { badSignature: true })).status).toBeGreaterThanOrEqual(400);
  const unsigned = await fetch(world.webhookUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issue_comment',
      'x-github-delivery': randomUUID(),
    },
    body: JSON.stringify(comment.payload),
  });
  expect(unsigned.status).toBe(400);
  expect(await world.runs()).toEqual([]);
});
