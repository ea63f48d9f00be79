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
  const point = (first: SQL, second: SQL) => sql`array[${first}, ${second}, ${metricPoints.at}::float8]`;
  const step = sql`${metricPoints.step}::float8`;
  const value = sql`${metricPoints.value}`;
  const bounds = db.$with('bounds').as(
    db
      .select({
        stage: sql<string>`${metricPoints.stage}`.as('b_stage'),
        name: sql<string>`${metricPoints.name}`.as('b_name'),
        lo: sql<number>`min(${metricPoints.step})`.as('lo'),
        hi: sql<number>`max(${metricPoints.step})`.as('hi'),
        total: sql<number>`count(*)::int`.as('total'),
        first: sql<Triple>`min(${point(step, value)})`.as('first'),
        last: sql<Triple>`max(${point(step, value)})`.as('last'),
      })
      .from(metricPoints)
      .where(where)
      .groupBy(metricPoints.stage, metricPoints.name),
  );
  // As core/downsample-points.ts computes it: ((step - first) / span) × buckets, floored,
  // at most buckets - 1; a series of at most 2 × buckets points keeps every step.
  const bucket = sql`case when ${bounds.total} <= ${sql.raw(String(2 * count))} then ${metricPoints.step}
    else least(${sql.raw(String(count - 1))}, floor((${metricPoints.step} - ${bounds.lo})::float8 / nullif(${bounds.hi} - ${bounds.lo}, 0) * ${sql.raw(String(count))})) end`;
  const rows = await db
    .with(bounds)
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      total: bounds.total,
      first: bounds.first,
      last: bounds.last,
      low: sql<Triple>`min(${point(value, step)})`,
      high: sql<Triple>`max(${point(value, sql`-${step}`)})`,
    })
    .from(metricPoints)
    .innerJoin(bounds, and(eq(bounds.stage, metricPoints.stage), eq(bounds.name, metricPoints.name)))
    .where(where)
    .groupBy(metricPoints.stage, metricPoints.name, bounds.total, bounds.first, bounds.last, bucket);
  const series = new Map<
    string,
    { stage: string; name: string; total: number; steps: Map<number, OverviewPoint> }
  >();
  for (const row of rows) {
    const id = JSON.stringify([row.stage, row.name]);
    let one = series.get(id);
    const total = Number(row.total);
    const keep = (step: number, value: number, at: number | null): void => {
      one!.steps.set(step, { stage: row.stage, name: row.name, step, value, at, total });
    };
    if (!one) {
      series.set(id, (one = { stage: row.stage, name: row.name, total, steps: new Map() }));
      const [firstStep, firstValue, firstAt] = row.first.map(numberOrNull);
      const [lastStep, lastValue, lastAt] = row.last.map(numberOrNull);
      keep(firstStep!, firstValue!, firstAt ?? null);
      keep(lastStep!, lastValue!, lastAt ?? null);
    }
    const [lowValue, lowStep, lowAt] = row.low.map(numberOrNull);
    const [highValue, highStep, highAt] = row.high.map(numberOrNull);
    keep(lowStep!, lowValue!, lowAt ?? null);
    keep(-highStep!, highValue!, highAt ?? null);
  }
  return [...series.values()]
    .sort((a, b) => (a.stage === b.stage ? (a.name < b.name ? -1 : 1) : a.stage < b.stage ? -1 : 1))
    .flatMap((one) => [...one.steps.values()].sort((a, b) => a.step - b.step));
}

/** A point as the database's float8 array carries it (elements as the driver reads them). */
type Triple = (number | string | null)[];

function numberOrNull(element: number | string | null): number | null {
  return element === null ? null : Number(element);
}
