import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  PR,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/create-runner.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { finishedStage } from './page-world.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

let world: GitHubAppWorld;
let browser: TestBrowser;

beforeAll(async () => {
  await openGitHubAppDatabase();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await closeGitHubAppDatabase();
});
beforeEach(async () => {
  world = await openGitHubAppWorld();
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

/** A link the control plane made for its public URL, pointed at where this test's plane listens. */
function onThisPlane(link: string): string {
  const url = new URL(link);
  return `${world.plane.url}${url.pathname}${url.search}`;
}

test('each check run of a sweep links its run page, and the sweep comment links the sweep page; both open without signing in', async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1,0.01'));
  const runs = await world.runs();
  const checkRuns = await waitFor('two check runs with details', () => {
    const made = world.double.checkRuns(world.repo.fullName);
    return made.length === 2 && made.every((run) => run.detailsUrl !== null) ? made : undefined;
  });
  const sweepComment = await waitFor('the sweep comment', () =>
    world.double.comments(world.repo.fullName, PR).find((comment) => comment.body.includes('fluksio sweep')),
  );

  for (const checkRun of checkRuns) {
    const details = new URL(checkRun.detailsUrl!);
    expect(details.pathname).toBe(`/runs/${checkRun.externalId}`);
    expect([...details.searchParams.keys()].sort()).toEqual(['exp', 'sig']);
  }
  const page = await browser.newPage();
  try {
    const opened = await page.goto(onThisPlane(checkRuns[0]!.detailsUrl!));
    expect(opened?.status()).toBe(200);
    await page.locator('#run-status').waitFor();
    expect(await page.locator('h1').textContent()).toContain(checkRuns[0]!.externalId);
    // Without its signature, the same page is as good as absent.
    const unsigned = await page.goto(`${world.plane.url}/runs/${checkRuns[0]!.externalId}`);
    expect(unsigned?.status()).toBe(404);

    const sweepLink = /\[Compare the runs on the sweep's page\]\(([^)]+)\)/.exec(sweepComment.body)?.[1];
    expect(sweepLink).toBeDefined();
    expect(new URL(sweepLink!).pathname).toBe(`/groups/${runs[0]!.groupId}`);
    const sweep = await page.goto(onThisPlane(sweepLink!));
    expect(sweep?.status()).toBe(200);
    await page.locator('#sweep-table').waitFor();
    expect(await page.locator('#sweep-table tbody tr').count()).toBe(2);
  } finally {
    await page.context().close();
  }
});

test("a finished run's check run summary embeds its main metric's curves, an SVG at a signed link", async () => {
  await world.deliver(world.comment('/fluksio run lr=0.1'));
  const [run] = await world.runs();
  const runnerToken = randomBytes(32).toString('hex');
  await createRunner({
    db: world.db,
    name: 'gpu-box',
    owner: 'acme',
    labels: ['gpu'],
    repositories: [],
    tokenHash: hashToken(runnerToken),
  });
  const call = async (path: string, json: unknown) => {
    const response = await fetch(`${world.plane.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runnerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    expect(response.status, `${path}: ${await response.clone().text()}`).toBeLessThan(300);
    return response.status === 204 ? null : ((await response.json()) as Record<string, unknown>);
  };
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })) as {
    lease: string;
    run: { id: string; params: Record<string, string | number | boolean> };
  };
  expect(claim.run.id).toBe(run!.id);
  await call(`/api/v1/runs/${run!.id}/start`, {
    lease: claim.lease,
    codeDigest: 'd'.repeat(64),
    envDigest: 'd'.repeat(64),
    ...ranAsClaimed(claim),
  });
  await call(`/api/v1/runs/${run!.id}/events`, {
    lease: claim.lease,
    attempt: 1,
    events: [
      { seq: 0, type: 'stage.started', stage: 'train', at: new Date().toISOString() },
      {
        seq: 1,
        type: 'metric.points',
        points: Array.from({ length: 30 }, (_, step) => ({
          stage: 'train',
          name: 'accuracy',
          step,
          value: 1 - 1 / (step + 2),
        })),
      },
      { seq: 2, type: 'stage.finished', stage: finishedStage('train', { metrics: { accuracy: 0.97 } }) },
    ],
  });
  await call(`/api/v1/runs/${run!.id}/finish`, {
    lease: claim.lease,
    status: 'succeeded',
    reason: null,
    metrics: { accuracy: 0.97 },
  });

  const summary = await waitFor('the completed check run', () => {
    const [checkRun] = world.double.checkRuns(world.repo.fullName);
    return checkRun?.status === 'completed' ? checkRun.output.summary : undefined;
  });
  const image = /!\[accuracy curves\]\(([^)]+)\)/.exec(summary ?? '')?.[1];
  expect(image).toBeDefined();
  expect(new URL(image!).pathname).toBe(`/pages/charts/runs/${run!.id}/curves.svg`);
  const answer = await fetch(onThisPlane(image!));
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('image/svg+xml');
  const svg = await answer.text();
  expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  expect(svg).toMatch(/<path d="M[\d.]+ [\d.]+(L[\d.]+ [\d.]+){29}" fill="none" stroke="#0072b2"/);
  // The same image without its signature is as absent as a run that does not exist.
  const url = new URL(onThisPlane(image!));
  url.searchParams.delete('sig');
  expect((await fetch(url)).status).toBe(404);

  // And it is a picture Chromium draws.
  const page = await browser.newPage();
  try {
    await page.setContent(`<img alt="accuracy curves" src="${onThisPlane(image!)}">`);
    const width = await page
      .locator('img')
      .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    expect(width).toBe(640);
    await browser.screenshot(page, 'check-run-chart');
  } finally {
    await page.context().close();
  }
});
