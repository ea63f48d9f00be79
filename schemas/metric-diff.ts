/** Which direction of a metric is better (the pipeline's `metrics:` section). */
export type MetricGoals = Readonly<Record<string, { goal: 'min' | 'max' }>>;

export interface MetricDiffRow {
  name: string;
  baseline: number | null;
  value: number | null;
  /** value − baseline, when both exist. */
  delta: number | null;
  /** delta as a percentage of |baseline|; null when the baseline is 0 or missing. */
  deltaPct: number | null;
  /** True when the change goes the pipeline's `goal` way, false against it, null without a goal or change. */
  better: boolean | null;
}

/**
 * The metric diff of DESIGN §7: every metric of either run, this run's value against
 * the baseline's, with Δ, Δ% and better/worse by goal. Metrics with a goal come first,
 * in the order the pipeline declares them, then the rest by name.
 */
export function diffMetrics(
  current: Readonly<Record<string, number>>,
  baseline: Readonly<Record<string, number>> | null,
  goals: MetricGoals,
): MetricDiffRow[] {
  const names = inGoalOrder([...Object.keys(current), ...Object.keys(baseline ?? {})], goals);
  return names.map((name) => {
    const value = current[name] ?? null;
    const before = baseline?.[name] ?? null;
    const delta = value !== null && before !== null ? value - before : null;
    const deltaPct =
      delta !== null && before !== null && before !== 0 ? (delta / Math.abs(before)) * 100 : null;
    const goal = goals[name]?.goal;
    const better = delta === null || delta === 0 || !goal ? null : goal === 'max' ? delta > 0 : delta < 0;
    return { name, baseline: before, value, delta, deltaPct, better };
  });
}

/**
 * Metric names, each once, in the order every table shows them: those with a goal as the
 * pipeline declares them, then the rest by name.
 */
export function inGoalOrder(names: Iterable<string>, goals: MetricGoals): string[] {
  const declared = Object.keys(goals);
  return [...new Set(names)].sort((a, b) => {
    const ia = declared.indexOf(a);
    const ib = declared.indexOf(b);
    if (ia >= 0 || ib >= 0) return (ia < 0 ? Infinity : ia) - (ib < 0 ? Infinity : ib);
    return a < b ? -1 : a > b ? 1 : 0;
  });
}
