import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Annotation } from '../../schemas/annotation.js';
import { groupSeries, type MetricSeries } from '../../schemas/metric-series.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { annotations } from '../../schemas/tables/annotations.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { toStageRecord } from './to-stage-record.js';

export type { MetricSeries };

/** Everything `fluksio show` and `fluksio diff` print about a run. */
export interface RunDetail {
  run: Run;
  /** In the order the run first reported them. */
  stages: StageRecord[];
  /** In the order the run reported them. */
  annotations: Annotation[];
  /**
   * Metric name → series. A cached stage's series are those of the run that executed it
   * (a restored stage streams nothing). Should two stages stream one name, the later
   * stage's series is kept.
   */
  series: Record<string, MetricSeries>;
}

/**
 * A run with its stages, annotations and metric series; null for an unknown run id. With
 * `series: false` the series are left empty, and no point is read (a live page's state).
 */
export async function getRunDetail({
  db,
  runId,
  series = true,
}: {
  db: Database;
  runId: string;
  series?: boolean;
}): Promise<RunDetail | null> {
  const source = alias(stages, 'source');
  const none = Promise.resolve([]);
  const [[run], stageRows, annotationRows, ownPoints, restoredPoints] = await Promise.all([
    db.select().from(runs).where(eq(runs.id, runId)),
    db.select().from(stages).where(eq(stages.runId, runId)).orderBy(asc(stages.position)),
    db.select().from(annotations).where(eq(annotations.runId, runId)).orderBy(asc(annotations.id)),
    !series
      ? none
      : db
          .select({
            stage: metricPoints.stage,
            name: metricPoints.name,
            step: metricPoints.step,
            value: metricPoints.value,
            at: metricPoints.at,
          })
          .from(metricPoints)
          .where(eq(metricPoints.runId, runId)),
    // A cached stage's points live under the source run's stage with the same cache key,
    // whatever that stage was called there (the key does not include the stage name).
    !series
      ? none
      : db
          .select({
            stage: stages.name,
            name: metricPoints.name,
            step: metricPoints.step,
            value: metricPoints.value,
            at: metricPoints.at,
          })
          .from(stages)
          .innerJoin(source, and(eq(source.runId, stages.cachedFrom), eq(source.cacheKey, stages.cacheKey)))
          .innerJoin(
            metricPoints,
            and(eq(metricPoints.runId, source.runId), eq(metricPoints.stage, source.name)),
          )
          .where(and(eq(stages.runId, runId), isNotNull(stages.cachedFrom))),
  ]);
  if (!run) return null;
  return {
    run,
    stages: stageRows.map(toStageRecord),
    annotations: annotationRows.map(({ stage, path, line, level, message, title }) => ({
      stage,
      path,
      line,
      level,
      message,
      title,
    })),
    series: groupSeries(
      stageRows.map((row) => row.name),
      [...ownPoints, ...restoredPoints],
    ),
  };
}
