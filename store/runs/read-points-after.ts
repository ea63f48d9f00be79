import { and, asc, eq, gt, notInArray, or, type SQL } from 'drizzle-orm';
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
 * whole run, so a live page asking what is new costs what is new. A cached stage's
 * points, which live under the run that executed it, are not read.
 */
export async function readPointsAfter({
  db,
  runId,
  held,
}: {
  db: Database;
  runId: string;
  held: ReadonlyMap<string, number>;
}): Promise<StreamedPoint[]> {
  const names = [...held.keys()];
  const wanted: SQL[] = [...held].map(([name, step]) =>
    and(eq(metricPoints.name, name), gt(metricPoints.step, step))!,
  );
  if (names.length > 0) wanted.push(notInArray(metricPoints.name, names));
  return db
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      step: metricPoints.step,
      value: metricPoints.value,
      at: metricPoints.at,
    })
    .from(metricPoints)
    .where(and(eq(metricPoints.runId, runId), names.length > 0 ? or(...wanted) : undefined))
    .orderBy(asc(metricPoints.stage), asc(metricPoints.name), asc(metricPoints.step));
}
