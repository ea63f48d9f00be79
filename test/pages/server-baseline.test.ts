import { expect, test } from 'vitest';
import type { RunPageData } from '../../schemas/page-data.js';
import { DrivenRun, finishedStage, pageLinks, usePageWorld } from './page-world.js';

const world = usePageWorld();

async function runWith(accuracy: number): Promise<DrivenRun> {
  const run = await DrivenRun.start(world.plane, { ...world });
  await run.events(
    {
      type: 'metric.points',
      points: [0, 1, 2].map((step) => ({
        stage: 'train',
        name: 'accuracy',
        step,
        value: (accuracy * (step + 1)) / 3,
      })),
    },
    { type: 'stage.finished', stage: finishedStage('train', { metrics: { accuracy } }) },
  );
  await run.finish('succeeded', { accuracy });
  return run;
}

test("a control plane's run page diffs against the run's fixed baseline and overlays its curves", async () => {
  const baseline = await runWith(0.8);
  const run = await runWith(0.9);
  const answer = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: world.submitter });
  const data = answer.json as unknown as RunPageData;
  expect(data.report.baseline?.id).toBe(baseline.id);
  expect(data.report.diff.find((row) => row.name === 'accuracy')).toMatchObject({
    baseline: 0.8,
    value: 0.9,
  });
  expect(data.baselineSeries.accuracy?.points).toHaveLength(3);

  await world.page.goto(`${world.plane.url}/runs/${run.id}?${pageLinks.sign('acme/model')}`);
  await world.page.locator('main[data-final="true"]').waitFor();
  const row = world.page.locator('table.diff tbody tr', { hasText: 'accuracy' });
  await expect(row.locator('td').first().textContent()).resolves.toBe('0.8');
  await world.page.locator('figure[data-metric="accuracy"]').waitFor();
  await expect(
    world.page
      .getByText(`baseline ${baseline.id.slice(0, 12)}`)
      .first()
      .isVisible(),
  ).resolves.toBe(true);
});
