import { experimentColumns } from '../core/experiments/experiment-columns.js';
import { formatSigned } from '../core/text/format.js';
import type { ParamValue } from '../schemas/key-inputs.js';
import { diffMetrics, inGoalOrder, type MetricDiffRow, type MetricGoals } from '../schemas/metric-diff.js';
import type { RunStatus } from '../schemas/statuses.js';

/** A sweep member as its comparison needs it, with the metrics of the run it is compared against. */
export interface SweepMember {
  id: string;
  status: RunStatus;
  params: Readonly<Record<string, ParamValue>>;
  metrics: Readonly<Record<string, number>>;
  /** The metrics of the member's baseline (the sweep's); null without one. */
  baselineMetrics: Readonly<Record<string, number>> | null;
}

/** One member's row: its metrics against the baseline, by metric name. */
export interface SweepRow {
  member: SweepMember;
  /** One row per metric of the comparison, by name. */
  diff: ReadonlyMap<string, MetricDiffRow>;
  /** The metrics whose best value (by their goal, among the succeeded members) this member holds. */
  best: ReadonlySet<string>;
}

/** A sweep's members side by side: what the terminal's sweep table and the pull request's comment show. */
export interface SweepComparison {
  /** The params whose values differ between the members (the swept ones), in the members' order. */
  varying: string[];
  /** The metrics shown: those with a goal as the pipeline declares them, then the rest by name. */
  metrics: string[];
  rows: SweepRow[];
  /**
   * Per metric with a goal: the best value among the succeeded members (ties all hold it);
   * none when they all hold the same value.
   */
  bestValues: ReadonlyMap<string, number>;
}

/**
 * Compares a sweep's members (issue 13, item 7): the params that vary between them (as
 * `fluksio runs` chooses its columns), every metric a member, its baseline or the goals
 * name, each member's value against its baseline (Δ, Δ%, better by goal), and the best
 * succeeded members of each metric with a goal (every one holding the best value; none when
 * they are all equal). `members` keep their order.
 */
export function compareSweep({
  members,
  goals,
}: {
  members: readonly SweepMember[];
  goals: MetricGoals;
}): SweepComparison {
  const varying = members.length < 2 ? [] : experimentColumns(members, { all: false, goals }).params;
  const metrics = inGoalOrder(
    [
      ...Object.keys(goals),
      ...members.flatMap((member) => [
        ...Object.keys(member.metrics),
        ...Object.keys(member.baselineMetrics ?? {}),
      ]),
    ],
    goals,
  );
  const bestValues = new Map<string, number>();
  for (const name of metrics) {
    const goal = goals[name]?.goal;
    if (!goal) continue;
    const values = members
      .filter((member) => member.status === 'succeeded')
      .map((member) => member.metrics[name])
      .filter((value): value is number => value !== undefined && Number.isFinite(value));
    // Where every member holds the same value there is nothing to choose between them.
    if (values.length === 0 || (values.length > 1 && values.every((value) => value === values[0]))) continue;
    bestValues.set(name, goal === 'min' ? Math.min(...values) : Math.max(...values));
  }
  const rows = members.map((member) => {
    const diff = new Map(
      diffMetrics(member.metrics, member.baselineMetrics, goals).map((row) => [row.name, row] as const),
    );
    const best = new Set(
      metrics.filter(
        (name) =>
          member.status === 'succeeded' &&
          bestValues.has(name) &&
          member.metrics[name] === bestValues.get(name),
      ),
    );
    return { member, diff, best };
  });
  return { varying, metrics, rows, bestValues };
}

/**
 * A member's change against the baseline in a cell: `(+1.2%)`, `(−80.0%)`; the absolute
 * change `(+0.05)` when the baseline is 0; nothing without both values.
 */
export function sweepDelta(row: MetricDiffRow | undefined): string {
  if (!row || row.delta === null) return '';
  if (row.deltaPct === null) return `(${formatSigned(row.delta)})`;
  return `(${row.deltaPct >= 0 ? '+' : '−'}${Math.abs(row.deltaPct).toFixed(1)}%)`;
}
