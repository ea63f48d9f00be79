import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  PR,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';

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
