import { expect, test } from 'vitest';
import type { RunListPageData } from '../../schemas/page-data.js';
import { pageLinks, usePageWorld } from './page-world.js';

// Runs may come from another git host too, named by host and path (gitlab.corp/ml/model).
const world = usePageWorld({ env: { FLUKSIO_CLONE_HOSTS: 'github.com,gitlab.corp' } });

/** Submits `count` runs (queued), oldest first, alternating branches and learning rates. */
async function submitRuns(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const answer = await world.plane.submit(world.submitter, {
      params: { lr: i % 2 === 0 ? 0.1 : 0.01, seed: i },
      branch: i % 3 === 0 ? 'main' : 'feature/lr',
    });
    expect(answer.status).toBe(201);
    ids.push((answer.json.run as { id: string }).id);
  }
  return ids;
}

async function list(query: string): Promise<RunListPageData> {
  const answer = await world.plane.call('GET', `/pages/api/runs?repo=acme/model&${query}`, {
    token: world.submitter,
  });
  expect(answer.status, answer.text).toBe(200);
  return answer.json as unknown as RunListPageData;
}

test('a repository’s runs come newest first, a page at a time, each run once, even as new runs arrive', async () => {
  const ids = await submitRuns(30);
  const first = await list('');
  expect(first.runs.map((run) => run.id)).toEqual(ids.slice(5).reverse());
  expect(first.next).toBe(ids[5]);
  // A run made between two pages shifts nothing: the cursor is a run, not an offset.
  await submitRuns(1);
  const second = await list(`before=${first.next}`);
  expect(second.runs.map((run) => run.id)).toEqual(ids.slice(0, 5).reverse());
  expect(second.next).toBeNull();
});

test('lists filter by branch, status and params, a number matching however it is written', async () => {
  const ids = await submitRuns(6);
  expect((await list('branch=main')).runs.map((run) => run.id)).toEqual([ids[3], ids[0]]);
  expect((await list('param.lr=1e-1')).runs.map((run) => run.id)).toEqual([ids[4], ids[2], ids[0]]);
  expect((await list('param.lr=0.1&branch=feature%2Flr')).runs.map((run) => run.id)).toEqual([
    ids[4],
    ids[2],
  ]);
  expect((await list('status=running')).runs).toEqual([]);
  expect((await list('status=queued,failed')).runs).toHaveLength(6);
  const badStatus = await world.plane.call('GET', '/pages/api/runs?repo=acme/model&status=exploded', {
    token: world.submitter,
  });
  expect(badStatus.status).toBe(400);
  expect(badStatus.text).toContain('status[0]');
  const misspelt = await world.plane.call('GET', '/pages/api/runs?repo=acme/model&colour=red', {
    token: world.submitter,
  });
  expect(misspelt.status).toBe(400);
  expect(misspelt.text).toContain('colour: is not a filter');
});

test('a repository on another git host, named by host and path, has its list too', async () => {
  const repository = 'gitlab.corp/ml/model';
  const token = await world.plane.addApiToken({ repositories: [repository] });
  const submitted = await world.plane.submit(token, { repository, cloneUrl: `https://${repository}.git` });
  expect(submitted.status, JSON.stringify(submitted.json)).toBe(201);
  const answer = await world.plane.call('GET', `/pages/api/runs?repo=${repository}`, { token });
  expect(answer.status, answer.text).toBe(200);
  const data = answer.json as unknown as RunListPageData;
  expect(data.repository).toBe(repository);
  expect(data.runs.map((run) => run.id)).toEqual([(submitted.json.run as { id: string }).id]);
  const shell = await world.plane.call('GET', `/runs?repo=${repository}&${pageLinks.sign(repository)}`);
  expect(shell.status, shell.text).toBe(200);
  // A path that climbs is no repository.
  const climbing = await world.plane.call('GET', '/pages/api/runs?repo=gitlab.corp/../secret', { token });
  expect(climbing.status).toBe(400);
  expect(climbing.text).toContain('repo');
});

test('a list of a repository the caller may not read is a 404, as one that does not exist', async () => {
  await submitRuns(1);
  const other = await world.plane.call('GET', '/pages/api/runs?repo=acme/secret', { token: world.submitter });
  const none = await world.plane.call('GET', '/pages/api/runs?repo=nobody/nothing', {
    token: world.submitter,
  });
  expect([other.status, none.status]).toEqual([404, 404]);
});

test('the list page links each run, filters from its form, and pages to older runs', async () => {
  const ids = await submitRuns(27);
  const page = world.page;
  await page.goto(`${world.plane.url}/runs?repo=acme/model&${pageLinks.sign('acme/model')}`);
  await page.locator('main[data-final="true"]').waitFor();
  expect(await page.locator('table.run-list tbody tr').count()).toBe(25);
  await world.browser.screenshot(page, 'run-list');

  await page.getByLabel('Branch').fill('main');
  await page.getByLabel('Params').fill('lr=0.1');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/branch=main/);
  await page.locator('main[data-final="true"]').waitFor();
  const shown = await page
    .locator('table.run-list tbody tr')
    .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')));
  // Branch main is every third run, lr=0.1 every second: runs 0, 6, 12, 18, 24.
  expect(shown).toEqual([24, 18, 12, 6, 0].map((i) => ids[i]));

  await page.goto(`${world.plane.url}/runs?repo=acme/model&${pageLinks.sign('acme/model')}`);
  await page.locator('main[data-final="true"]').waitFor();
  await page.getByRole('link', { name: 'Older runs →' }).click();
  await page.waitForURL(/before=/);
  await page.locator('main[data-final="true"]').waitFor();
  expect(
    await page
      .locator('table.run-list tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run'))),
  ).toEqual([ids[1], ids[0]]);
  await page.locator(`a[href^="/runs/${ids[0]}"]`).click();
  await page.waitForURL(new RegExp(`/runs/${ids[0]}`));
});
