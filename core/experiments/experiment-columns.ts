import type { ParamValue } from '../../schemas/key-inputs.js';
import { inGoalOrder, type MetricGoals } from '../../schemas/metric-diff.js';
import type { ExperimentRun } from './experiment-run.js';

/** Which params and metrics a run table gives a column, and what the others hold. */
export interface ExperimentColumns {
  /** Params in the order the runs list them. */
  params: string[];
  /** Metrics with a goal in the pipeline's order, then the rest by name (as diffs order them). */
  metrics: string[];
  /** The params left out because every run holds the same value. */
  sameParams: Record<string, ParamValue>;
  /** The metrics left out because every run holds the same value. */
  sameMetrics: Record<string, number>;
}

/**
 * The columns of `fluksio runs` (as `dvc exp show` keeps only what tells runs apart): the
 * params and metrics whose values differ between `runs` (a value some run lacks differs),
 * or, with `all` or fewer than two runs, every one.
 */
export function experimentColumns(
  runs: readonly Pick<ExperimentRun, 'params' | 'metrics'>[],
  { all, goals }: { all: boolean; goals: MetricGoals },
): ExperimentColumns {
  const paramNames = [...new Set(runs.flatMap((run) => Object.keys(run.params)))];
  const metricNames = inGoalOrder(
    runs.flatMap((run) => Object.keys(run.metrics)),
    goals,
  );
  const showAll = all || runs.length < 2;
  const varies = (valueOf: (run: Pick<ExperimentRun, 'params' | 'metrics'>) => ParamValue | undefined) =>
    showAll || new Set(runs.map((run) => JSON.stringify(valueOf(run) ?? null))).size > 1;
  const params = paramNames.filter((name) => varies((run) => run.params[name]));
  const metrics = metricNames.filter((name) => varies((run) => run.metrics[name]));
  const [first] = runs;
  return {
    params,
    metrics,
    sameParams: Object.fromEntries(
      paramNames.filter((name) => !params.includes(name)).map((name) => [name, first?.params[name] ?? '']),
    ),
    sameMetrics: Object.fromEntries(
      metricNames.filter((name) => !metrics.includes(name)).map((name) => [name, first?.metrics[name] ?? 0]),
    ),
  };
}
