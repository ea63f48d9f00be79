import type { MetricGoals } from '../../schemas/metric-diff.js';

/**
 * The metric a run's image shows: the first with a goal that the run streamed, else the
 * first it streamed; null when it streamed none.
 */
export function mainMetric(series: Readonly<Record<string, unknown>>, goals: MetricGoals): string | null {
  const streamed = Object.keys(series);
  return Object.keys(goals).find((name) => streamed.includes(name)) ?? streamed[0] ?? null;
}
