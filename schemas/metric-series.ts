import type { MetricSeries } from './protocol/run-metrics-reply.js';

export type { MetricSeries };

/**
 * A run's points as metric name → series, stages in `stageOrder`, steps ascending. Should
 * two stages stream one name, the later stage's series is kept.
 */
export function groupSeries(
  stageOrder: readonly string[],
  points: readonly { stage: string; name: string; step: number; value: number; at?: number | null }[],
): Record<string, MetricSeries> {
  const byStageAndName = new Map<string, MetricSeries & { name: string }>();
  for (const { stage, name, step, value, at } of points) {
    const id = JSON.stringify([stage, name]);
    let series = byStageAndName.get(id);
    if (!series) byStageAndName.set(id, (series = { name, stage, points: [] }));
    series.points.push(at === null || at === undefined ? { step, value } : { step, value, at });
  }
  const position = (stage: string): number => stageOrder.indexOf(stage);
  const ordered = [...byStageAndName.values()].sort((a, b) => position(a.stage) - position(b.stage));
  // fromEntries defines own properties, so a metric named "__proto__" stays a metric.
  return Object.fromEntries(
    ordered.map(({ name, stage, points: seriesPoints }) => [
      name,
      { stage, points: seriesPoints.sort((a, b) => a.step - b.step) },
    ]),
  );
}
