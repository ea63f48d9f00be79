import { and, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import type { Database } from '../db/database.js';

/** A point kept for a chart, with how many points its series has (in the range asked). */
export interface OverviewPoint {
  stage: string;
  name: string;
  step: number;
  value: number;
  at: number | null;
  /** The points of this stage's series (between `range`'s steps, with one). */
  total: number;
}

/**
 * A run's series cut down in the database to a chart `buckets` pixels wide, so a run of a
 * hundred thousand points sends a page two thousand: the same min/max per bucket as
 * core/downsample-points.ts (each series' steps split into `buckets` equal ranges, each
 * keeping its points of least and greatest value, the earliest of equals; the first and
 * last point kept; a series of at most 2 × buckets points whole), computed where the
 * points are. Only `stage`'s or `name`'s series with them, only the points between
 * `range`'s steps with it. By stage, name and step.
 */
export async function readSeriesOverview({
  db,
  runId,
  buckets,
  stage,
  name,
  range,
}: {
  db: Database;
  runId: string;
  buckets: number;
  stage?: string;
  name?: string;
  range?: { from: number; to: number };
}): Promise<OverviewPoint[]> {
  const count = Math.max(1, Math.trunc(buckets));
  const wanted: SQL[] = [eq(metricPoints.runId, runId)];
  if (stage !== undefined) wanted.push(eq(metricPoints.stage, stage));
  if (name !== undefined) wanted.push(eq(metricPoints.name, name));
  if (range) wanted.push(gte(metricPoints.step, range.from), lte(metricPoints.step, range.to));
  const where = and(...wanted);
  // Arrays compare element by element: min(array[value, step, at]) is a group's least value
  // at its earliest step, max(array[value, -step, at]) its greatest at the earliest; in one
  // pass, with no sort. A series' first and last points are min and max of array[step, …].
  // Steps and times are exact in a float8 up to 2^53.
  const point = (first: SQL, second: SQL) => sql`array[${first}, ${second}, ${metricPoints.at}::float8]`;
  const step = sql`${metricPoints.step}::float8`;
  const value = sql`${metricPoints.value}`;
  // First each series' bounds (a range of the primary key), then each series on its own,
  // with its bounds as constants: a plan PostgreSQL runs as one pass over the series.
  const bounds = await db
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      lo: sql<number>`min(${metricPoints.step})`,
      hi: sql<number>`max(${metricPoints.step})`,
      total: sql<number>`count(*)::int`,
      first: sql<Triple>`min(${point(step, value)})`,
      last: sql<Triple>`max(${point(step, value)})`,
    })
    .from(metricPoints)
    .where(where)
    .groupBy(metricPoints.stage, metricPoints.name)
    .orderBy(metricPoints.stage, metricPoints.name);
  const perSeries = await Promise.all(
    bounds.map(async (one) => {
      const total = Number(one.total);
      const lo = Number(one.lo);
      const span = Number(one.hi) - lo;
      const kept = new Map<number, OverviewPoint>();
      const keep = (pointStep: number, pointValue: number, at: number | null): void => {
        kept.set(pointStep, {
          stage: one.stage,
          name: one.name,
          step: pointStep,
          value: pointValue,
          at,
          total,
        });
      };
      // [step, value, at] of the series' first and last points.
      const [firstStep, firstValue, firstAt] = one.first.map(numberOrNull);
      const [lastStep, lastValue, lastAt] = one.last.map(numberOrNull);
      keep(firstStep!, firstValue!, firstAt ?? null);
      keep(lastStep!, lastValue!, lastAt ?? null);
      // As core/downsample-points.ts computes it: ((step - first) / span) × buckets, floored,
      // at most buckets - 1; a series of at most 2 × buckets points keeps every step.
      const bucket =
        total <= 2 * count || span === 0
          ? metricPoints.step
          : sql`least(${sql.raw(String(count - 1))}, floor((${metricPoints.step} - ${sql.raw(String(lo))})::float8 / ${sql.raw(String(span))}::float8 * ${sql.raw(String(count))}))`;
      const rows = await db
        .select({
          low: sql<Triple>`min(${point(value, step)})`,
          high: sql<Triple>`max(${point(value, sql`-${step}`)})`,
        })
        .from(metricPoints)
        .where(and(where, eq(metricPoints.stage, one.stage), eq(metricPoints.name, one.name)))
        .groupBy(bucket);
      for (const row of rows) {
        // [value, step, at] of the least, [value, -step, at] of the greatest.
        const [lowValue, lowStep, lowAt] = row.low.map(numberOrNull);
        const [highValue, highStep, highAt] = row.high.map(numberOrNull);
        keep(lowStep!, lowValue!, lowAt ?? null);
        keep(-highStep!, highValue!, highAt ?? null);
      }
      return [...kept.values()].sort((a, b) => a.step - b.step);
    }),
  );
  return perSeries.flat();
}

/** A point as the database's float8 array carries it (elements as the driver reads them). */
type Triple = (number | string | null)[];

function numberOrNull(element: number | string | null): number | null {
  return element === null ? null : Number(element);
}
