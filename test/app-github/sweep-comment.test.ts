import { beforeEach, expect, test } from 'vitest';
import { pushPayload } from '../github/webhook-fixtures.js';
import { PR, registerAcmeRunner, SHA, waitFor, type GitHubAppWorld } from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';
import { runNextClaim } from './run-next-claim.js';

let world: GitHubAppWorld;
let runnerToken: string;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });
beforeEach(async () => {
  runnerToken = await registerAcmeRunner(world, ['gpu']);
  // main is SHA.main; the pull request's head SHA.head branched off it.
  world.double.setCommits(world.repo.fullName, [SHA.main], { branch: 'main' });
  world.double.setCommits(world.repo.fullName, [SHA.head, SHA.main]);
});

/** Claims the next run as a runner would, runs it and finishes it with `metrics`. */
const runNext = (metrics: Record<string, number>) => runNextClaim(world, runnerToken, metrics);

const CREATE_COMMENT = 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments';
const EDIT_COMMENT = 'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}';
const requestsTo = (route: string) =>
  world.double.requests.filter((request) => `${request.method} ${request.route}` === route).length;

test("/fluksio run lr=0.1,0.01 leaves one comment, edited until it shows each member against the base branch's run", async () => {
  // main's own run, the pull request's baseline (DESIGN §7): lr at its default, 0.01.
  await world.deliver(pushPayload({ repo: world.repo, after: SHA.main }));
  const baseline = await runNext({ accuracy: 0.8, loss: 0.5 });
  expect(baseline.params).toMatchObject({ lr: 0.01 });

  await world.deliver(world.comment('/fluksio run lr=0.1,0.01'));
  const [first, second] = [
    await runNext({ accuracy: 0.88, loss: 0.4 }),
    await runNext({ accuracy: 0.76, loss: 0.6 }),
  ];
  expect([first.params.lr, second.params.lr]).toEqual([0.1, 0.01]);

  const marked = () => world.replies().filter((body) => body.startsWith('<!-- fluksio:group:'));
  const body = await waitFor('the comment with both members finished', () =>
    marked().find((each) => each.includes('2 of 2 runs finished')),
  );
  expect(body).toContain(
    `against the sweep's baseline, main @ ${SHA.main.slice(0, 7)} (merge-base), run \`${baseline.id}\``,
  );
  expect(body).toContain('| lr | status | `accuracy` (max) | `loss` | run |');
  expect(body).toContain(`| \`0.01\` | 📏 **baseline** | 0.8 | 0.5 | \`${baseline.id}\` |`);
  expect(body).toContain(
    `| \`0.1\` | ✅ succeeded | **0.88** 🏆 (+10.0%) | 0.4 (−20.0%) | \`${first.id}\` |`,
  );
  expect(body).toContain(`| \`0.01\` | ✅ succeeded | 0.76 (−5.0%) | 0.6 (+20.0%) | \`${second.id}\` |`);
  // One comment, made once and edited in place; the command got no other reply.
  expect(marked()).toHaveLength(1);
  expect(world.replies()).toHaveLength(1);
  expect(requestsTo(CREATE_COMMENT)).toBe(1);
  expect(requestsTo(EDIT_COMMENT)).toBeGreaterThanOrEqual(1);
  expect(world.double.comments(world.repo.fullName, PR)[0]?.previousBodies.length).toBeGreaterThanOrEqual(1);
});
