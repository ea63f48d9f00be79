import { describe, expect, test } from 'vitest';
import { PageLinkSigner } from '../../app/pages/page-link-signer.js';
import { DrivenRun, finishedStage, pageLinks, usePageWorld } from './page-world.js';

const world = usePageWorld();

function signedRunUrl(runId: string): string {
  return `${world.plane.url}/runs/${runId}?${pageLinks.sign('acme/model')}`;
}

const points = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => from + i).flatMap((step) => [
    { stage: 'train', name: 'loss', step, value: 1 / (step + 1) },
    { stage: 'train', name: 'accuracy', step, value: 1 - 1 / (step + 2) },
    { stage: 'train', name: 'lr', step, value: 0.1 * 0.9 ** step },
  ]);

test('a live run: three curves grow, a tqdm bar stays one line that updates, and the page ends finished without a reload', async () => {
  const run = await DrivenRun.start(world.plane, { ...world, params: {} });
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    {
      type: 'stage.log',
      stage: 'train',
      lines: ['\u001b[32mloading data\u001b[0m', 'epochs:  10%|█         | 1/10\r'],
    },
    { type: 'metric.points', points: points(0, 5) },
  );
  await world.page.goto(signedRunUrl(run.id));
  await world.page.locator('#run-status', { hasText: 'running' }).waitFor();
  for (const metric of ['loss', 'accuracy', 'lr']) {
    await world.page.locator(`figure[data-metric="${metric}"][data-points="5"]`).waitFor();
  }
  const log = world.page.locator('#log-train');
  await log.locator('li', { hasText: '10%' }).waitFor();

  await run.events(
    { type: 'stage.log', stage: 'train', lines: ['epochs:  50%|█████     | 5/10\r'] },
    { type: 'metric.points', points: points(5, 12) },
  );
  for (const metric of ['loss', 'accuracy', 'lr']) {
    await world.page.locator(`figure[data-metric="${metric}"][data-points="12"]`).waitFor();
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
  await world.browser.screenshot(world.page, 'run-page-live');

  await run.events(
    { type: 'stage.log', stage: 'train', lines: ['epochs: 100%|██████████| 10/10', 'done'] },
    { type: 'stage.finished', stage: finishedStage('train', { metrics: { loss: 0.08, accuracy: 0.93 } }) },
  );
  await run.finish('succeeded', { loss: 0.08, accuracy: 0.93 });
  await world.page.locator('main[data-final="true"]').waitFor();
  await log
    .locator('[data-complete="true"]')
    .or(world.page.locator('#log-train[data-complete="true"]'))
    .waitFor();
  expect(await world.page.locator('#run-status').textContent()).toBe('succeeded');
  expect(await log.locator('li', { hasText: 'epochs:' }).count()).toBe(1);
  expect(await log.locator('li', { hasText: 'epochs:' }).textContent()).toContain('100%');
  expect(await world.page.locator('table.diff').textContent()).toContain('0.93');
  expect(await world.page.locator('tr[data-stage="train"]').getAttribute('data-status')).toBe('ran');
  await world.browser.screenshot(world.page, 'run-page-finished');
});

test('a log line is linkable by its number and the log is searchable', async () => {
  const run = await DrivenRun.start(world.plane, world);
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1} ${i % 7 === 0 ? 'needle' : 'hay'}`);
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    { type: 'stage.log', stage: 'train', lines },
    { type: 'stage.finished', stage: finishedStage('train') },
  );
  await run.finish('succeeded', {});
  await world.page.goto(`${signedRunUrl(run.id)}#log-train-L250`);
  await world.page.locator('#log-train[data-complete="true"]').waitFor();
  await world.page.locator('#log-train-L250.linked').waitFor();
  expect(await world.page.locator('#log-train-L250 .lt').textContent()).toBe('line 250 hay');
  const search = world.page.getByRole('searchbox', { name: 'Search the log of train' });
  await search.fill('NEEDLE');
  const log = world.page.locator('#log-train');
  expect(await log.getAttribute('data-matches')).toBe('43');
  expect(await log.locator('.log-status').textContent()).toBe('43 of 300 lines match (at 1)');
  await world.page.locator('#log-train-L1.current').waitFor();
  // Enter goes to the next match, Shift+Enter back; the buttons do the same.
  await search.press('Enter');
  await world.page.locator('#log-train-L8.current').waitFor();
  await search.press('Shift+Enter');
  await search.press('Shift+Enter');
  await world.page.locator('#log-train-L295.current').waitFor();
  await world.page.getByRole('button', { name: 'Next match' }).click();
  await world.page.locator('#log-train-L1.current').waitFor();
});

test('a long log is windowed: a linked line near its end is shown, and search finds a line near the end', async () => {
  const run = await DrivenRun.start(world.plane, world);
  const total = 60_000;
  await run.events({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
  for (let from = 0; from < total; from += 15_000) {
    await run.events({
      type: 'stage.log',
      stage: 'train',
      lines: Array.from({ length: 15_000 }, (_, i) => `step ${from + i + 1} \u001b[32mok\u001b[0m`),
    });
  }
  await run.events({ type: 'stage.finished', stage: finishedStage('train') });
  await run.finish('succeeded', {});
  await world.page.goto(`${signedRunUrl(run.id)}#log-train-L58000`);
  const log = world.page.locator('#log-train');
  await world.page.locator('#log-train[data-complete="true"]').waitFor();
  expect(await log.getAttribute('data-lines')).toBe(String(total));
  const linked = world.page.locator('#log-train-L58000');
  await linked.locator('xpath=self::*[contains(@class, "linked")]').waitFor();
  expect(await linked.locator('.lt').textContent()).toBe('step 58000 ok');
  expect(await linked.isVisible()).toBe(true);
  // Only what is on screen (and a margin) is in the DOM.
  expect(await log.locator('li').count()).toBeLessThan(200);

  await world.page.getByRole('searchbox', { name: 'Search the log of train' }).fill('step 59990 ');
  expect(await log.getAttribute('data-matches')).toBe('1');
  await world.page.locator('#log-train-L59990.current').waitFor();
  expect(await world.page.locator('#log-train-L59990').isVisible()).toBe(true);
});

test('a run streams its points with the time they were printed: the wall-time axis is kept in the URL', async () => {
  const run = await DrivenRun.start(world.plane, world);
  const start = Date.parse('2026-12-01T10:00:00Z');
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    {
      type: 'metric.points',
      points: Array.from({ length: 10 }, (_, step) => ({
        stage: 'train',
        name: 'loss',
        step,
        value: 1 / (step + 1),
        at: start + step * 30_000,
      })),
    },
  );
  const api = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: world.submitter });
  const series = (api.json.series as Record<string, { points: { at?: number }[] }>).loss!;
  expect(series.points.map((point) => point.at)).toEqual(
    Array.from({ length: 10 }, (_, step) => start + step * 30_000),
  );
  await world.page.goto(signedRunUrl(run.id));
  await world.page.locator('figure[data-metric="loss"][data-points="10"]').waitFor();
  await world.page.getByLabel('x axis').selectOption('wall');
  expect(new URL(world.page.url()).searchParams.get('x')).toBe('wall');
  // Ten points 30 s apart: the wall-time axis reaches 270 seconds after the first.
  await world.page.locator('figure[data-metric="loss"][data-axis="wall"][data-x-max="270"]').waitFor();
  await world.page.reload();
  expect(await world.page.getByLabel('x axis').inputValue()).toBe('wall');
});

test('a failed run shows its traceback with a link to the raising line on GitHub', async () => {
  const run = await DrivenRun.start(world.plane, world);
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
  await world.page.goto(signedRunUrl(run.id));
  await world.page.locator('main[data-final="true"]').waitFor();
  const section = world.page.locator('section.traceback');
  expect(await section.locator('pre').textContent()).toContain('ZeroDivisionError: division by zero');
  const link = section.locator('a.raised');
  expect(await link.textContent()).toBe('train.py:17');
  expect(await link.getAttribute('href')).toBe(
    `https://github.com/acme/model/blob/${'a'.repeat(40)}/train.py#L17`,
  );
  await world.browser.screenshot(world.page, 'run-page-failed');
});

describe('who may look', () => {
  test('without a link or token, with a token of another repository, or a forged link: 404, as for no run', async () => {
    const run = await DrivenRun.start(world.plane, world);
    const other = await world.plane.addApiToken({ repositories: ['acme/other'] });
    const nothing = await world.page.goto(`${world.plane.url}/runs/${run.id}`);
    expect(nothing?.status()).toBe(404);
    const missing = await world.page.goto(
      `${world.plane.url}/runs/01NOSUCHRUN?${pageLinks.sign('acme/model')}`,
    );
    expect(missing?.status()).toBe(404);
    expect(await world.page.locator('h1').textContent()).toBe(
      await (async () => {
        await world.page.goto(`${world.plane.url}/runs/${run.id}`);
        return world.page.locator('h1').textContent();
      })(),
    );
    const forged = new PageLinkSigner(Buffer.from('f'.repeat(48)), 3_600_000).sign('acme/model');
    expect((await world.page.goto(`${world.plane.url}/runs/${run.id}?${forged}`))?.status()).toBe(404);
    const otherRepo = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: other });
    expect(otherRepo.status).toBe(404);
    const scripted = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: world.submitter });
    expect(scripted.status).toBe(200);
    expect((scripted.json.report as { run: { id: string } }).run.id).toBe(run.id);
  });

  test('an expired signed link is 403, saying how to get a fresh one', async () => {
    const run = await DrivenRun.start(world.plane, world);
    const old = pageLinks.sign('acme/model', Date.now() - 2 * 3_600_000);
    const answer = await world.page.goto(`${world.plane.url}/runs/${run.id}?${old}`);
    expect(answer?.status()).toBe(403);
    expect(await world.page.locator('h1').textContent()).toBe('This link has expired');
    await world.browser.screenshot(world.page, 'run-page-expired');
    const api = await world.plane.call('GET', `/pages/api/runs/${run.id}?${old}`);
    expect(api.status).toBe(403);
  });
});
