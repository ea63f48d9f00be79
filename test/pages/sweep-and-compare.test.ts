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
