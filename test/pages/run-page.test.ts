import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { PageLinkSigner } from '../../app/pages/page-link-signer.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { DrivenRun, finishedStage, pageLinks, PAGES_SECRET } from './page-world.js';

let database: TestDatabase;
let browser: TestBrowser;
let plane: TestControlPlane;
let submitter: string;
let runnerToken: string;
let page: Page;

beforeAll(async () => {
  [database, browser] = await Promise.all([createTestDatabase(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await database?.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_PAGES_SECRET: PAGES_SECRET } });
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  runnerToken = (await plane.addRunner({ name: `r-${Date.now()}`, owner: 'acme' })).token;
  page = await browser.newPage();
});
afterEach(async () => {
  await page.context().close();
  await plane.close();
});

function signedRunUrl(runId: string): string {
  return `${plane.url}/runs/${runId}?${pageLinks.sign('acme/model')}`;
}

const points = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => from + i).flatMap((step) => [
    { stage: 'train', name: 'loss', step, value: 1 / (step + 1) },
    { stage: 'train', name: 'accuracy', step, value: 1 - 1 / (step + 2) },
    { stage: 'train', name: 'lr', step, value: 0.1 * 0.9 ** step },
  ]);

test('a live run: three curves grow, a tqdm bar stays one line that updates, and the page ends finished without a reload', async () => {
  const run = await DrivenRun.start(plane, { submitter, runnerToken, params: {} });
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    {
      type: 'stage.log',
      stage: 'train',
      lines: ['\u001b[32mloading data\u001b[0m', 'epochs:  10%|█         | 1/10\r'],
    },
    { type: 'metric.points', points: points(0, 5) },
  );
  await page.goto(signedRunUrl(run.id));
  await page.locator('#run-status', { hasText: 'running' }).waitFor();
  for (const metric of ['loss', 'accuracy', 'lr']) {
    await page.locator(`figure[data-metric="${metric}"][data-points="5"]`).waitFor();
  }
  const log = page.locator('#log-train');
  await log.locator('li', { hasText: '10%' }).waitFor();

  await run.events(
    { type: 'stage.log', stage: 'train', lines: ['epochs:  50%|█████     | 5/10\r'] },
    { type: 'metric.points', points: points(5, 12) },
  );
  for (const metric of ['loss', 'accuracy', 'lr']) {
    await page.locator(`figure[data-metric="${metric}"][data-points="12"]`).waitFor();
  }
  await log.locator('li', { hasText: '50%' }).waitFor();
  // The bar is one line: its earlier state was overwritten, not followed.
  expect(await log.locator('li', { hasText: 'epochs:' }).count()).toBe(1);
  expect(await log.locator('li', { hasText: '10%' }).count()).toBe(0);
  // Colours are kept as a terminal shows them, never as escape codes.
  const green = log.locator('li .lt span', { hasText: 'loading data' });
  expect(
    await green.evaluate(
      (span) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(span)
          .color,
    ),
  ).toBe('rgb(0, 187, 0)');
  expect(await log.textContent()).not.toContain('\u001b');
  await browser.screenshot(page, 'run-page-live');

  await run.events(
    { type: 'stage.log', stage: 'train', lines: ['epochs: 100%|██████████| 10/10', 'done'] },
    { type: 'stage.finished', stage: finishedStage('train', { metrics: { loss: 0.08, accuracy: 0.93 } }) },
  );
  await run.finish('succeeded', { loss: 0.08, accuracy: 0.93 });
  await page.locator('main[data-final="true"]').waitFor();
  await log.locator('[data-complete="true"]').or(page.locator('#log-train[data-complete="true"]')).waitFor();
  expect(await page.locator('#run-status').textContent()).toBe('succeeded');
  expect(await log.locator('li', { hasText: 'epochs:' }).count()).toBe(1);
  expect(await log.locator('li', { hasText: 'epochs:' }).textContent()).toContain('100%');
  expect(await page.locator('table.diff').textContent()).toContain('0.93');
  expect(await page.locator('tr[data-stage="train"]').getAttribute('data-status')).toBe('ran');
  await browser.screenshot(page, 'run-page-finished');
});

test('a log line is linkable by its number and the log is searchable', async () => {
  const run = await DrivenRun.start(plane, { submitter, runnerToken });
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1} ${i % 7 === 0 ? 'needle' : 'hay'}`);
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    { type: 'stage.log', stage: 'train', lines },
    { type: 'stage.finished', stage: finishedStage('train') },
  );
  await run.finish('succeeded', {});
  await page.goto(`${signedRunUrl(run.id)}#log-train-L250`);
  await page.locator('#log-train[data-complete="true"]').waitFor();
  expect(await page.locator('#log-train-L250').getAttribute('class')).toContain('linked');
  expect(await page.locator('#log-train-L250 .lt').textContent()).toBe('line 250 hay');
  await page.getByRole('searchbox', { name: 'Search the log of train' }).fill('needle');
  expect(await page.locator('#log-train li:visible').count()).toBe(43);
  expect(await page.locator('#log-train .log-status').textContent()).toBe('43 of 300 lines match');
});

test('a failed run shows its traceback with a link to the raising line on GitHub', async () => {
  const run = await DrivenRun.start(plane, { submitter, runnerToken });
  const traceback = [
    'Traceback (most recent call last):',
    '  File "/work/run/train.py", line 42, in <module>',
    '    main()',
    '  File "/work/run/train.py", line 17, in main',
    '    1 / 0',
    'ZeroDivisionError: division by zero',
  ];
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    { type: 'stage.log', stage: 'train', lines: traceback },
    {
      type: 'annotation',
      annotation: {
        stage: 'train',
        path: 'train.py',
        line: 17,
        level: 'error',
        message: 'ZeroDivisionError: division by zero',
        title: null,
      },
    },
    {
      type: 'stage.finished',
      stage: finishedStage('train', {
        status: 'failed',
        exitCode: 1,
        logTail: traceback.join('\n'),
        error: 'exited with 1',
      }),
    },
  );
  await run.finish('failed', {}, 'Stage train failed');
  await page.goto(signedRunUrl(run.id));
  await page.locator('main[data-final="true"]').waitFor();
  const section = page.locator('section.traceback');
  expect(await section.locator('pre').textContent()).toContain('ZeroDivisionError: division by zero');
  const link = section.locator('a.raised');
  expect(await link.textContent()).toBe('train.py:17');
  expect(await link.getAttribute('href')).toBe(
    `https://github.com/acme/model/blob/${'a'.repeat(40)}/train.py#L17`,
  );
  await browser.screenshot(page, 'run-page-failed');
});

describe('who may look', () => {
  test('without a link or token, with a token of another repository, or a forged link: 404, as for no run', async () => {
    const run = await DrivenRun.start(plane, { submitter, runnerToken });
    const other = await plane.addApiToken({ repositories: ['acme/other'] });
    const nothing = await page.goto(`${plane.url}/runs/${run.id}`);
    expect(nothing?.status()).toBe(404);
    const missing = await page.goto(`${plane.url}/runs/01NOSUCHRUN?${pageLinks.sign('acme/model')}`);
    expect(missing?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe(
      await (async () => {
        await page.goto(`${plane.url}/runs/${run.id}`);
        return page.locator('h1').textContent();
      })(),
    );
    const forged = new PageLinkSigner(Buffer.from('f'.repeat(48)), 3_600_000).sign('acme/model');
    expect((await page.goto(`${plane.url}/runs/${run.id}?${forged}`))?.status()).toBe(404);
    const otherRepo = await plane.call('GET', `/pages/api/runs/${run.id}`, { token: other });
    expect(otherRepo.status).toBe(404);
    const scripted = await plane.call('GET', `/pages/api/runs/${run.id}`, { token: submitter });
    expect(scripted.status).toBe(200);
    expect((scripted.json.report as { run: { id: string } }).run.id).toBe(run.id);
  });

  test('an expired signed link is 403, saying how to get a fresh one', async () => {
    const run = await DrivenRun.start(plane, { submitter, runnerToken });
    const old = pageLinks.sign('acme/model', Date.now() - 2 * 3_600_000);
    const answer = await page.goto(`${plane.url}/runs/${run.id}?${old}`);
    expect(answer?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('This link has expired');
    await browser.screenshot(page, 'run-page-expired');
    const api = await plane.call('GET', `/pages/api/runs/${run.id}?${old}`);
    expect(api.status).toBe(403);
  });
});
