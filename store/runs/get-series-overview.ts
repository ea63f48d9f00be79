import { and, eq } from 'drizzle-orm';
import type { MetricSeries } from '../../schemas/metric-series.js';
import { groupSeries } from '../../schemas/metric-series.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { readSeriesOverview, type OverviewPoint } from './read-series-overview.js';

/** A series cut down for a chart: `total` is how many points it has, when some were left out. */
export type OverviewSeries = MetricSeries & { total?: number };

/**
 * A run's series as getRunDetail groups them (a cached stage's from the run that executed
 * it, the later stage's where two stream one name), each cut down in the database to a
 * chart `buckets` pixels wide (readSeriesOverview); with `name`, only that metric, and
 * with `range`, only its points between the two steps.
 */
export async function getSeriesOverview({
  db,
  runId,
  stages: stageRecords,
  buckets,
  name,
  range,
}: {
  db: Database;
  runId: string;
  /** The run's stages, in order (getRunDetail's). */
  stages: readonly StageRecord[];
  buckets: number;
  name?: string;
  range?: { from: number; to: number };
}): Promise<Record<string, OverviewSeries>> {
  const wanted = { buckets, ...(name === undefined ? {} : { name }), ...(range ? { range } : {}) };
  const points: OverviewPoint[] = await readSeriesOverview({ db, runId, ...wanted });
  for (const stage of stageRecords) {
    if (stage.cachedFrom === null || stage.cacheKey === null) continue;
    // The stage of the run that executed it, whatever it was called there.
    const [source] = await db
      .select({ name: stages.name })
      .from(stages)
      .where(and(eq(stages.runId, stage.cachedFrom), eq(stages.cacheKey, stage.cacheKey)));
    if (!source) continue;
    const restored = await readSeriesOverview({ db, runId: stage.cachedFrom, stage: source.name, ...wanted });
    points.push(...restored.map((point) => ({ ...point, stage: stage.name })));
  }
  const totals = new Map(points.map((point) => [JSON.stringify([point.stage, point.name]), point.total]));
  const series: Record<string, OverviewSeries> = groupSeries(
    stageRecords.map((stage) => stage.name),
    points,
  );
  for (const [metric, one] of Object.entries(series)) {
    const total = totals.get(JSON.stringify([one.stage, metric]));
    if (total !== undefined && total > one.points.length) one.total = total;
  }
  return series;
}
