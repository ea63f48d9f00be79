import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  PR,
  registerAcmeRunner,
  SHA,
  waitFor,
  type GitHubAppWorld,
} from './github-app-fixture.js';

let world: GitHubAppWorld;
let runnerToken: string;

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);
beforeEach(async () => {
  world = await openGitHubAppWorld();
  runnerToken = await registerAcmeRunner(world, ['gpu']);
  // main is SHA.main; the pull request's head SHA.head branched off it.
  world.double.setCommits(world.repo.fullName, [SHA.main], { branch: 'main' });
  world.double.setCommits(world.repo.fullName, [SHA.head, SHA.main]);
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

async function call(path: string, json: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${world.plane.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runnerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Claims the next run as a runner would, runs it and finishes it with `metrics`; its id. */
async function runNext(metrics: Record<string, number>): Promise<Claim['run']> {
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })) as unknown as Claim;
  await call(`/api/v1/runs/${claim.run.id}/start`, {
    lease: claim.lease,
    codeDigest: 'c'.repeat(64),
    envDigest: 'e'.repeat(64),
    ...ranAsClaimed(claim),
  });
  await call(`/api/v1/runs/${claim.run.id}/finish`, {
    lease: claim.lease,
    status: 'succeeded',
    reason: null,
    metrics,
  });
  return claim.run;
}

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
  expect(body).toContain('| lr | status | accuracy (max) | loss | run |');
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
