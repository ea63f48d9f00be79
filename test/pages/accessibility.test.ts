import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { ulid } from 'ulid';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { DrivenRun, finishedStage, pageLinks, PAGES_SECRET } from './page-world.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let database: TestDatabase;
let browser: TestBrowser;
let plane: TestControlPlane;
let page: Page;
let made: DrivenRun[];
let groupId: string;

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
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const runnerToken = (await plane.addRunner({ name: `r-${Date.now()}`, owner: 'acme' })).token;
  groupId = ulid();
  made = [];
  for (const [index, lr] of [0.1, 0.01, 0.001].entries()) {
    const run = await DrivenRun.start(plane, {
      submitter,
      runnerToken,
      params: { lr },
      group: { id: groupId, index },
    });
    // The outputs table: a file to download, a directory to pull; stored, as a runner does.
    const model = randomBytes(2048);
    const checkpoint = randomBytes(4096);
    const checkpointDigest = await run.storeBlob(checkpoint);
    const manifest = JSON.stringify({
      version: 1,
      files: [{ path: 'step-10.pt', digest: checkpointDigest, size: checkpoint.length, executable: false }],
    });
    const outs = [
      { path: 'model.pt', kind: 'file' as const, digest: await run.storeBlob(model), size: model.length },
      {
        path: 'checkpoints',
        kind: 'dir' as const,
        digest: await run.storeBlob(manifest),
        size: checkpoint.length,
      },
    ];
    await run.events(
      { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
      { type: 'stage.log', stage: 'train', lines: ['\u001b[33mwarming up\u001b[0m', 'epoch 1', 'epoch 2'] },
      {
        type: 'metric.points',
        points: Array.from({ length: 10 }, (_, step) => ({
          stage: 'train',
          name: 'loss',
          step,
          value: lr + 1 / (step + 1),
        })),
      },
      {
        type: 'stage.finished',
        stage: finishedStage('train', {
          metrics: { loss: lr },
          outs,
        }),
      },
    );
    await run.finish('succeeded', { loss: lr });
    made.push(run);
  }
  page = await browser.newPage();
});
afterEach(async () => {
  await page.context().close();
  await plane.close();
});

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(): Promise<{ id: string; nodes: string[] }[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ id: violation.id, nodes: violation.nodes.map((node) => node.target.join(' ')) }));
}

const signed = () => pageLinks.sign('acme/model');

test('the run, sweep and compare pages have no serious or critical axe-core violations', async () => {
  for (const path of [
    `/runs/${made[0]!.id}?${signed()}`,
    `/groups/${groupId}?${signed()}`,
    `/compare?runs=${made.map((run) => run.id).join(',')}&${signed()}`,
  ]) {
    await page.goto(`${plane.url}${path}`);
    await page.locator('main[data-final="true"]').waitFor();
    await page.locator('main [data-complete="true"], main table').first().waitFor();
    if (path.startsWith('/runs/')) await page.locator('table.outputs a.download').waitFor();
    if (path.startsWith('/groups/')) {
      // An axis's keyboard handle, focused and brushed.
      await page.locator('.pc-handle').first().focus();
      await page.keyboard.press('ArrowUp');
      await page.locator('.pc-handle[data-brush="0.4:0.6"]').waitFor();
    }
    expect(await seriousViolations(), path).toEqual([]);
  }
});

test('keyboard: the skip link comes first with a visible focus, and a sweep is sorted from the keyboard', async () => {
  await page.goto(`${plane.url}/groups/${groupId}?${signed()}`);
  await page.locator('main[data-final="true"]').waitFor();
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => {
    const active = (
      globalThis as unknown as {
        document: { activeElement: { textContent: string; matches(s: string): boolean } };
      }
    ).document.activeElement;
    return { text: active.textContent, focusVisible: active.matches(':focus-visible') };
  });
  expect(first).toEqual({ text: 'Skip to content', focusVisible: true });
  const outline = await page.evaluate(() => {
    const g = globalThis as unknown as {
      document: { activeElement: unknown };
      getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string };
    };
    const style = g.getComputedStyle(g.document.activeElement);
    return `${style.outlineStyle} ${style.outlineWidth}`;
  });
  expect(outline).toBe('solid 3px');

  // Tab on to the loss column's sort button and press Enter: the order reverses.
  const rows = page.locator('#sweep-table tbody tr');
  const before = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    const name = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document
          .activeElement.textContent,
    );
    if (name?.startsWith('loss')) break;
  }
  await page.keyboard.press('Enter');
  const after = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
  expect(after).toEqual([...before].reverse());
});
