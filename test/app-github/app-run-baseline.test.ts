import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { beforeEach, expect, test } from 'vitest';
import { GitHubOutbox } from '../../app/github/outbox/outbox.js';
import { hashToken } from '../../app/http/hash-token.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { createRun } from '../../store/runs/create-run.js';
import { findBaseline } from '../../store/runs/find-baseline.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { TEST_REDIS_URL } from '../app/control-plane-harness.js';
import { probotForDouble } from '../github/probot-for-double.js';
import { pullRequestPayload, pushPayload } from '../github/webhook-fixtures.js';
import {
  completedCheckRun,
  PR,
  registerAcmeRunner,
  SHA,
  waitFor,
  type GitHubAppWorld,
} from './github-app-fixture.js';
import { gitHubAppWorldPerTest } from './github-app-world-per-test.js';
import { runNextClaim } from './run-next-claim.js';

let world: GitHubAppWorld;
let runnerToken: string;

gitHubAppWorldPerTest({ opened: (opened) => (world = opened), current: () => world });
beforeEach(async () => {
  runnerToken = await registerAcmeRunner(world, ['gpu']);
  // main is SHA.main; the pull request's head SHA.head branched off it (the merge-base).
  world.double.setCommits(world.repo.fullName, [SHA.main], { branch: 'main' });
  world.double.setCommits(world.repo.fullName, [SHA.head, SHA.main]);
});

/** Claims the next run as a runner would, runs it and finishes it with `metrics`. */
const runNext = (metrics: Record<string, number>) => runNextClaim(world, runnerToken, metrics);

/** `GET /api/v1/runs/:id` as `fluksio show --remote` reads it, listing the head's own ancestry. */
async function report(runId: string, token: string): Promise<RemoteRunReport> {
  const response = await fetch(
    `${world.plane.url}/api/v1/runs/${runId}?baseline-commits=${SHA.head},${SHA.main}`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${runId} answered ${response.status}: ${text}`);
  return JSON.parse(text) as RemoteRunReport;
}

async function runRow(runId: string): Promise<Run> {
  const [row] = await world.db.select().from(runs).where(eq(runs.id, runId));
  if (!row) throw new Error(`no run ${runId}`);
  return row;
}

/** Renders a run's check run again (as any later change of the run would) and waits until it is sent. */
async function renderAgain(runId: string): Promise<void> {
  const probot = probotForDouble(world.double);
  // Not started: it only bumps the render version and queues the job the control plane's outbox runs.
  const notifier = new GitHubOutbox({
    db: world.db,
    redisUrl: TEST_REDIS_URL,
    queuePrefix: world.settings.queuePrefix,
    github: (id) => probot.auth(id),
    settings: { apiBaseUrlForLinks: 'https://fluksio.example.com' },
    logger: pino({ level: 'silent' }),
  });
  try {
    const [before] = await world.db.select().from(githubChecks).where(eq(githubChecks.runId, runId));
    await notifier.notifyRun(runId);
    await waitFor('the check run sent again', async () => {
      const [check] = await world.db.select().from(githubChecks).where(eq(githubChecks.runId, runId));
      return check !== undefined && check.sentVersion > (before?.sentVersion ?? 0);
    });
  } finally {
    await notifier.close();
  }
}

test("a pull request's run is fixed with the merge-base's run when it finishes: its check run and GET name it, and a later run on the base branch changes neither", async () => {
  const readToken = randomBytes(32).toString('hex');
  await createApiToken({
    db: world.db,
    name: 'reader',
    repositories: [world.repo.fullName],
    scope: 'read',
    tokenHash: hashToken(readToken),
  });
  await world.deliver(pushPayload({ repo: world.repo, after: SHA.main }));
  const base = await runNext({ accuracy: 0.8 });

  await world.deliver(
    pullRequestPayload({
      repo: world.repo,
      action: 'opened',
      number: PR,
      head: { sha: SHA.head, ref: 'feature' },
      base: { sha: SHA.main, ref: 'main' },
    }),
  );
  const pullRun = await runNext({ accuracy: 0.85 });
  expect((await runRow(pullRun.id)).commit).toBe(SHA.head);

  // Recorded once, from GitHub's answer to the outbox: the merge-base and its first parents.
  const fixed = await waitFor('the pull request run fixed', async () => {
    const row = await runRow(pullRun.id);
    return row.baselineFixed && row;
  });
  expect(fixed).toMatchObject({
    baselineRunId: base.id,
    baselineCommits: [SHA.main],
    baselineMergeBase: SHA.main,
  });
  const checkRun = await completedCheckRun(world, pullRun.id);
  expect(checkRun.output.summary).toContain(`main @ ${SHA.main.slice(0, 7)} (merge-base)`);
  expect(checkRun.output.summary).toContain(base.id);
  expect((await report(pullRun.id, readToken)).baseline?.id).toBe(base.id);

  // A later success at the merge-base, with the same params: a new lookup would choose it.
  const baseRow = await runRow(base.id);
  const { run: later } = await createRun({
    db: world.db,
    run: {
      ...baseRow,
      id: ulid(),
      triggerKey: `test:later:${base.id}`,
      createdAt: new Date(Date.now() + 60_000),
      metrics: { accuracy: 0.99 },
    },
  });
  const lookup = await findBaseline({
    db: world.db,
    repository: fixed.repository,
    pipelinePath: fixed.pipelinePath,
    commits: [SHA.main],
    excludeRunId: fixed.id,
    paramsDigest: fixed.paramsDigest,
  });
  expect(lookup?.id).toBe(later.id);

  await renderAgain(pullRun.id);
  const again = world.double.checkRuns(world.repo.fullName).find((each) => each.externalId === pullRun.id);
  expect(again?.output.summary).toContain(base.id);
  expect(again?.output.summary).not.toContain(later.id);
  expect((await report(pullRun.id, readToken)).baseline?.id).toBe(base.id);
  expect((await runRow(pullRun.id)).baselineRunId).toBe(base.id);
  // Looked up once for the run, not at each render.
  const compares = world.double.requests.filter(
    (request) => request.route === '/repos/{owner}/{repo}/compare/{basehead}',
  );
  expect(compares).toHaveLength(1);
});
