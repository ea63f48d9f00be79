import { and, asc, eq } from 'drizzle-orm';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import type { Database } from '../db/database.js';

/**
 * The series a cache entry's stage streamed in the run that made it (only that run holds
 * them: metric-points.ts), steps ascending. Empty when the run is gone or streamed none.
 */
export async function cacheEntryPoints({
  db,
  entry,
}: {
  db: Database;
  entry: Pick<CacheEntry, 'runId' | 'stage'>;
}): Promise<MetricPoint[]> {
  const rows = await db
    .select({
      stage: metricPoints.stage,
      name: metricPoints.name,
      step: metricPoints.step,
      value: metricPoints.value,
      at: metricPoints.at,
    })
    .from(metricPoints)
    .where(and(eq(metricPoints.runId, entry.runId), eq(metricPoints.stage, entry.stage)))
    .orderBy(asc(metricPoints.name), asc(metricPoints.step));
  return rows.map(({ at, ...point }) => (at === null ? point : { ...point, at }));
}
