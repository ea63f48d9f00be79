import { downsamplePoints, pointsInRange } from '../../core/downsample-points.js';
import type { MetricSeries } from '../../schemas/metric-series.js';
import type { PageSeries } from '../../schemas/page-data.js';

/**
 * Each series cut down to a chart `buckets` pixels wide (core/downsample-points.ts), with
 * `total` set where points were left out; with `range`, only its points between the two
 * steps first. Without `buckets`, the series as they are.
 */
export function downsampleSeries(
  series: Record<string, MetricSeries>,
  buckets: number | undefined,
  range?: { from: number; to: number },
): Record<string, PageSeries> {
  if (buckets === undefined && range === undefined) return series;
  return Object.fromEntries(
    Object.entries(series).map(([name, one]) => [name, downsampleOne(one, buckets, range)]),
  );
}

/** One series as downsampleSeries cuts it. */
export function downsampleOne(
  series: MetricSeries,
  buckets: number | undefined,
  range?: { from: number; to: number },
): PageSeries {
  const points = range ? pointsInRange(series.points, range.from, range.to) : series.points;
  const kept = buckets === undefined ? points : downsamplePoints(points, buckets);
  return kept.length === series.points.length
    ? series
    : { ...series, points: [...kept], total: points.length };
}
