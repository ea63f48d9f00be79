import { and, asc, eq, gt, lte, notInArray, or, sql, type SQL } from 'drizzle-orm';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import type { Database } from '../db/database.js';

/** A point a run streamed, with its stage and metric. */
export interface StreamedPoint {
  stage: string;
  name: string;
  step: number;
  value: number;
  at: number | null;
}

/**
 * The points a run streamed that a page holding its series up to `held` (metric name →
 * last step held) lacks: of each held metric the points past its step, of every other
 * metric all of them, by stage, name and step. Reads the primary key's ranges, never the
 * whole run, so a live page asking what is new costs what is new. At most `perSeries`
 * points of a metric are read: null when one has more, for the page is better sent whole
 * and cut down than millions of points at once. A cached stage's points, which live under
 * the run that executed it, are not read.
 */
export async function readPointsAfter({
  db,
  runId,
  held,
  perSeries,
}: {
  db: Database;
  runId: string;
  held: ReadonlyMap<string, number>;
  perSeries: number;
}): Promise<StreamedPoint[] | null> {
  const names = [...held.keys()];
  const wanted: SQL[] = [...held].map(([name, step]) =>
    and(eq(metricPoints.name, name), gt(metricPoints.step, step))!,
  );
  if (names.length > 0) wanted.push(notInArray(metricPoints.name, names));
  const numbered = db
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      step: metricPoints.step,
      value: metricPoints.value,
      at: metricPoints.at,
      rank: sql<number>`row_number() over (partition by ${metricPoints.name} order by ${metricPoints.stage}, ${metricPoints.step})`
        .mapWith(Number)
        .as('rank'),
    })
    .from(metricPoints)
    .where(and(eq(metricPoints.runId, runId), names.length > 0 ? or(...wanted) : undefined))
    .as('numbered');
  // One past the cap says that a metric has more.
  const rows = await db
    .select()
    .from(numbered)
    .where(lte(numbered.rank, perSeries + 1))
    .orderBy(asc(numbered.stage), asc(numbered.name), asc(numbered.step));
  if (rows.some((row) => row.rank > perSeries)) return null;
  return rows.map(({ stage, name, step, value, at }) => ({ stage, name, step, value, at }));
}
