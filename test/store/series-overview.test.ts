import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { downsamplePoints } from '../../core/downsample-points.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { readPointsAfter } from '../../store/runs/read-points-after.js';
import { readSeriesOverview } from '../../store/runs/read-series-overview.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeRun, uniqueRepository } from './store-fixtures.js';

/** A reproducible walk with spikes, ties and sparse steps: what a noisy loss looks like. */
function walk(count: number, seed: number): { step: number; value: number; at: number }[] {
  let state = seed;
  const random = (): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  let step = 0;
  let value = 1;
  return Array.from({ length: count }, (_, i) => {
    step += random() < 0.1 ? 7 : 1;
    value += random() < 0.01 ? 40 * (random() - 0.5) : random() - 0.5;
    // Rounded so that buckets hold ties, which keep their earliest point.
    // `+ 0` turns -0 into 0, as the database stores it.
    return { step, value: Math.round(value * 4) / 4 + 0, at: 1_764_000_000_000 + i * 100 };
  });
}

describe.each(databaseBackends)('series cut down in the database on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function runWith(series: Record<string, { step: number; value: number; at: number }[]>) {
    const [run] = await db
      .insert(runs)
      .values(makeRun({ repository: uniqueRepository() }))
      .returning();
    const rows = Object.entries(series).flatMap(([name, points]) =>
      points.map((point) => ({ runId: run!.id, stage: 'train', name, ...point })),
    );
    for (let from = 0; from < rows.length; from += 2000)
      await db.insert(metricPoints).values(rows.slice(from, from + 2000));
    return run!.id;
  }

  test('the database keeps the very points core/downsample-points keeps, with each series total', async () => {
    const long = walk(6000, 7);
    const short = walk(150, 11);
    const runId = await runWith({ loss: long, lr: short });
    const kept = await readSeriesOverview({ db, runId, buckets: 100 });
    const of = (name: string) =>
      kept.filter((point) => point.name === name).map(({ step, value, at }) => ({ step, value, at }));
    expect(of('loss')).toEqual(downsamplePoints(long, 100));
    expect(of('loss').length).toBeLessThan(202 + 1);
    // Short enough to be drawn whole.
    expect(of('lr')).toEqual(short);
    expect(new Set(kept.filter((point) => point.name === 'loss').map((point) => point.total))).toEqual(
      new Set([6000]),
    );

    // A range: only its points, cut down on their own.
    const inRange = long.filter((point) => point.step >= 2000 && point.step <= 5000);
    const zoomed = await readSeriesOverview({
      db,
      runId,
      buckets: 100,
      name: 'loss',
      range: { from: 2000, to: 5000 },
    });
    expect(zoomed.map(({ step, value, at }) => ({ step, value, at }))).toEqual(
      downsamplePoints(inRange, 100),
    );
    expect(zoomed[0]!.total).toBe(inRange.length);
  });

  test('points after the steps a page holds: the rest of each held series, all of the others, none past the cap', async () => {
    const runId = await runWith({ loss: walk(20, 3), acc: walk(5, 5) });
    const lossSteps = walk(20, 3).map((point) => point.step);
    const held = new Map([['loss', lossSteps[14]!]]);
    const after = await readPointsAfter({ db, runId, held, perSeries: 5 });
    expect(after?.filter((point) => point.name === 'loss').map((point) => point.step)).toEqual(
      lossSteps.slice(15),
    );
    expect(after?.filter((point) => point.name === 'acc')).toHaveLength(5);
    expect(await readPointsAfter({ db, runId, held: new Map(), perSeries: 20 })).toHaveLength(25);
    // One series with more new points than the cap: none are read.
    expect(await readPointsAfter({ db, runId, held: new Map(), perSeries: 19 })).toBeNull();
    expect(await readPointsAfter({ db, runId, held, perSeries: 4 })).toBeNull();
  });
});
