import { eq } from 'drizzle-orm';
import { ulid } from 'ulid';
import { expect, test } from 'vitest';
import { runs } from '../../schemas/tables/runs.js';
import { DrivenRun, finishedStage, pageLinks, usePageWorld } from './page-world.js';

const world = usePageWorld();

const GOALS = { accuracy: { goal: 'max' as const }, loss: { goal: 'min' as const } };

/** A sweep of lr × seed, each run finished with its accuracy, loss and a loss curve. */
async function sweep(grid: { lr: number; seed: number; accuracy: number; loss: number }[]) {
  const groupId = ulid();
  const made: DrivenRun[] = [];
  for (const [index, point] of grid.entries()) {
    const run = await DrivenRun.start(world.plane, {
      ...world,

      params: { lr: point.lr, seed: point.seed },
      group: { id: groupId, index },
    });
    // What the pipeline's `metrics:` says; a GitHub-made run records it from fluksio.yml.
    await world.database.db.update(runs).set({ metricGoals: GOALS }).where(eq(runs.id, run.id));
    await run.events(
      { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
      {
        type: 'metric.points',
        points: Array.from({ length: 20 }, (_, step) => ({
          stage: 'train',
          name: 'loss',
          step,
          value: point.loss + 1 / (step + 1 + index),
        })),
      },
      {
        type: 'stage.finished',
        stage: finishedStage('train', { metrics: { accuracy: point.accuracy, loss: point.loss } }),
      },
    );
    await run.finish('succeeded', { accuracy: point.accuracy, loss: point.loss });
    made.push(run);
  }
  return { groupId, runs: made };
}

const GRID = [
  { lr: 0.1, seed: 1, accuracy: 0.81, loss: 0.4 },
  { lr: 0.1, seed: 2, accuracy: 0.84, loss: 0.35 },
  { lr: 0.1, seed: 3, accuracy: 0.8, loss: 0.42 },
  { lr: 0.1, seed: 4, accuracy: 0.83, loss: 0.3 },
  { lr: 0.01, seed: 1, accuracy: 0.9, loss: 0.33 },
  { lr: 0.01, seed: 2, accuracy: 0.88, loss: 0.31 },
  { lr: 0.01, seed: 3, accuracy: 0.86, loss: 0.37 },
  { lr: 0.01, seed: 4, accuracy: 0.87, loss: 0.36 },
];

test('a sweep of 8: sorted by the first goal, the best run by each goal marked, the parallel coordinates drawn on the canvas', async () => {
  const { groupId, runs: made } = await sweep(GRID);
  await world.page.goto(`${world.plane.url}/groups/${groupId}?${pageLinks.sign('acme/model')}`);
  await world.page.locator('main[data-final="true"]').waitFor();
  const rows = world.page.locator('#sweep-table tbody tr');
  expect(await rows.count()).toBe(8);
  // The goals as the run recorded them (PostgreSQL's jsonb keeps `loss` before `accuracy`):
  // the first one orders the table, best first.
  const order = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
  const lossOf = new Map(made.map((run, i) => [run.id, GRID[i]!.loss]));
  expect(order.map((id) => lossOf.get(id!))).toEqual(GRID.map((point) => point.loss).sort((a, b) => a - b));
  expect(await world.page.locator(`tr[data-run="${made[4]!.id}"]`).getAttribute('data-best')).toBe(
    'accuracy',
  );
  expect(await world.page.locator(`tr[data-run="${made[3]!.id}"]`).getAttribute('data-best')).toBe('loss');
  expect(await world.page.locator('th[aria-sort="ascending"]').textContent()).toContain('loss');

  // Pixels, not DOM: the canvas holds the axes, coloured run lines and the best run in red.
  const pixels = await world.page.locator('#parallel').evaluate((element) => {
    const canvas = element as unknown as {
      width: number;
      height: number;
      getContext(kind: '2d'): {
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      };
    };
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let drawn = 0;
    let red = 0;
    let blueish = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3]! === 0) continue;
      drawn++;
      if (data[i]! > 180 && data[i + 1]! < 40 && data[i + 2]! < 40) red++;
      if (data[i + 2]! > data[i]! + 40) blueish++;
    }
    return { drawn, red, blueish, total: data.length / 4 };
  });
  expect(pixels.drawn).toBeGreaterThan(pixels.total * 0.01);
  expect(pixels.red).toBeGreaterThan(100);
  expect(pixels.blueish).toBeGreaterThan(100);
  await world.browser.screenshot(world.page, 'sweep-page');

  // Another goal's column sorts best first too, and the URL keeps the choice.
  await world.page.getByRole('button', { name: /^accuracy/ }).click();
  const byAccuracy = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
  const accuracyOf = new Map(made.map((run, i) => [run.id, GRID[i]!.accuracy]));
  expect(byAccuracy.map((id) => accuracyOf.get(id!))).toEqual(
    GRID.map((point) => point.accuracy).sort((a, b) => b - a),
  );
  expect(new URL(world.page.url()).searchParams.get('sort')).toBe('metric:accuracy');
});

test('brushing an axis keeps the runs in its range in the table, on a log axis for a param spanning decades, and survives a reload', async () => {
  const grid = [0.0001, 0.001, 0.01, 0.1].flatMap((lr, i) => [
    { lr, seed: 1, accuracy: 0.8 + i / 100, loss: 0.4 - i / 100 },
    { lr, seed: 2, accuracy: 0.79 + i / 100, loss: 0.41 - i / 100 },
  ]);
  const { groupId, runs: made } = await sweep(grid);
  await world.page.goto(`${world.plane.url}/groups/${groupId}?${pageLinks.sign('acme/model')}`);
  await world.page.locator('main[data-final="true"]').waitFor();
  const canvas = world.page.locator('#parallel');
  // lr spans three orders of magnitude: a log axis, so its four values stand evenly apart.
  expect(await canvas.getAttribute('data-log-axes')).toBe('lr');
  expect((await canvas.getAttribute('data-axes'))?.split(',')[0]).toBe('lr');
  const box = (await canvas.boundingBox())!;
  // The plot's frame (parallel-coordinates.ts): the first axis 48 px from the left, from
  // 28 px below the top to 16 px above the bottom.
  const x = box.x + 48;
  const yAt = (fraction: number) => box.y + box.height - 16 - (box.height - 44) * fraction;
  await world.page.mouse.move(x, yAt(1));
  await world.page.mouse.down();
  await world.page.mouse.move(x, yAt(0.8), { steps: 4 });
  await world.page.mouse.move(x, yAt(0.55), { steps: 4 });
  await world.page.mouse.up();

  const kept = made.filter((_, i) => grid[i]!.lr >= 0.01).map((run) => run.id);
  const shown = () =>
    world.page
      .locator('#sweep-table tbody tr:visible')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')));
  expect((await shown()).sort()).toEqual(kept.sort());
  expect(await world.page.locator('#brush-status').textContent()).toBe('4 of 8 runs within the brushes');
  expect(new URL(world.page.url()).searchParams.get('brush')).toMatch(/^lr:0\.5\d\d:1\.000$/);
  await world.browser.screenshot(world.page, 'sweep-page-brushed');

  await world.page.reload();
  await world.page.locator('main[data-final="true"]').waitFor();
  expect((await shown()).sort()).toEqual(kept.sort());
  expect(await world.page.locator('#brush-status').textContent()).toBe('4 of 8 runs within the brushes');

  // A linear lr axis puts 0.01 near the bottom: the brush is dropped, every run is back.
  await world.page.locator('input[data-axis="lr"]').uncheck();
  expect(await world.page.locator('#sweep-table tbody tr:visible').count()).toBe(8);
  expect(new URL(world.page.url()).searchParams.get('pclog')).toBe('');
  await world.page.reload();
  await world.page.locator('main[data-final="true"]').waitFor();
  expect(await canvas.getAttribute('data-log-axes')).toBe('');
});

test('brushing from the keyboard: an axis is reached with Tab and shows its focus; arrows move and widen its brush, kept in the URL; Escape clears it', async () => {
  const grid = [0.0001, 0.001, 0.01, 0.1].flatMap((lr, i) => [
    { lr, seed: 1, accuracy: 0.8 + i / 100, loss: 0.4 - i / 100 },
    { lr, seed: 2, accuracy: 0.79 + i / 100, loss: 0.41 - i / 100 },
  ]);
  const { groupId, runs: made } = await sweep(grid);
  const { page } = world;
  await page.goto(`${world.plane.url}/groups/${groupId}?${pageLinks.sign('acme/model')}`);
  await page.locator('main[data-final="true"]').waitFor();
  const focused = () =>
    page.evaluate(() => {
      const active = (
        globalThis as unknown as {
          document: {
            activeElement: { getAttribute(name: string): string | null; matches(s: string): boolean };
          };
        }
      ).document.activeElement;
      return {
        axis: active.getAttribute('data-axis'),
        role: active.getAttribute('role'),
        focusVisible: active.matches(':focus-visible'),
      };
    });
  // Tab order: the page's controls, the log-scale choices, then each axis of the plot.
  const reached: (string | null)[] = [];
  for (let presses = 0; presses < 60; presses += 1) {
    await page.keyboard.press('Tab');
    const now = await focused();
    reached.push(now.role === 'slider' ? `axis ${now.axis}` : now.axis);
    if (now.role === 'slider') break;
  }
  expect(reached.at(-1)).toBe('axis lr');
  expect(reached.indexOf('lr')).toBeGreaterThanOrEqual(0);
  expect(reached.indexOf('lr')).toBeLessThan(reached.length - 1);
  expect(await focused()).toEqual({ axis: 'lr', role: 'slider', focusVisible: true });
  const handle = page.locator('.pc-handle[data-axis="lr"]');
  expect(
    await handle.evaluate(
      (element) =>
        (
          globalThis as unknown as { getComputedStyle(e: unknown): { outlineStyle: string } }
        ).getComputedStyle(element).outlineStyle,
    ),
  ).toBe('solid');

  const shown = () =>
    page
      .locator('#sweep-table tbody tr:visible')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')).sort());
  const runsWith = (lrs: number[]) =>
    made
      .filter((_, i) => lrs.includes(grid[i]!.lr))
      .map((run) => run.id)
      .sort();
  const brushInUrl = () => new URL(page.url()).searchParams.get('brush');

  // The first arrow brushes the middle fifth of lr's log axis (where no lr is); eight more move it to the top.
  await page.keyboard.press('ArrowUp');
  expect(brushInUrl()).toBe('lr:0.400:0.600');
  expect(await shown()).toEqual([]);
  for (let i = 0; i < 8; i += 1) await page.keyboard.press('ArrowUp');
  expect(brushInUrl()).toBe('lr:0.800:1.000');
  expect(await shown()).toEqual(runsWith([0.1]));
  // Shift+↓ widens it downwards, over lr = 0.01 (two thirds up the axis).
  for (let i = 0; i < 3; i += 1) await page.keyboard.press('Shift+ArrowDown');
  expect(brushInUrl()).toBe('lr:0.650:1.000');
  expect(await shown()).toEqual(runsWith([0.1, 0.01]));
  expect(await page.locator('#brush-status').textContent()).toBe('4 of 8 runs within the brushes');
  expect(await handle.getAttribute('aria-valuetext')).toBe('brushed from 65% to 100% of the axis');
  await world.browser.screenshot(page, 'sweep-page-keyboard-brush');

  // The address keeps it as it keeps a mouse's brush.
  await page.reload();
  await page.locator('main[data-final="true"]').waitFor();
  expect(await shown()).toEqual(runsWith([0.1, 0.01]));
  await handle.focus();
  await page.keyboard.press('Escape');
  expect(brushInUrl()).toBeNull();
  expect(await page.locator('#sweep-table tbody tr:visible').count()).toBe(8);
  expect(await handle.getAttribute('aria-valuetext')).toBe('no brush');
  // A mouse drag on the canvas still brushes: the handles over it take no pointer events.
  const box = (await page.locator('#parallel').boundingBox())!;
  const yAt = (fraction: number) => box.y + box.height - 16 - (box.height - 44) * fraction;
  await page.mouse.move(box.x + 48, yAt(1));
  await page.mouse.down();
  await page.mouse.move(box.x + 48, yAt(0.55), { steps: 6 });
  await page.mouse.up();
  expect(await shown()).toEqual(runsWith([0.1, 0.01]));
});

test('compare 3 runs: the params that differ first, the metrics, and their curves overlaid', async () => {
  const { runs: made } = await sweep(GRID.slice(0, 4));
  const chosen = [made[0]!, made[1]!, made[3]!];
  await world.page.goto(
    `${world.plane.url}/compare?runs=${chosen.map((run) => run.id).join(',')}&${pageLinks.sign('acme/model')}`,
  );
  await world.page.locator('main[data-final="true"]').waitFor();
  const table = world.page.locator('#compare-table');
  expect(await table.locator('thead th').count()).toBe(4);
  const rowLabels = await table.locator('tbody tr th').allTextContents();
  expect(rowLabels.slice(0, 2)).toEqual(['Params that differ', 'seed']);
  expect(await table.locator('tr.differs', { hasText: 'accuracy' }).textContent()).toContain('0.84');
  await world.page.locator('figure[data-metric="loss"][data-curves="3"][data-points="60"]').waitFor();
  await world.browser.screenshot(world.page, 'compare-page');
});
