import type { PageRunSummary, RunsPageData } from '../schemas/page-data.js';

/** Params whose value differs between runs, then those all runs share. */
export function paramsByVariation(runs: readonly PageRunSummary[]): { varying: string[]; same: string[] } {
  const names = [...new Set(runs.flatMap((run) => Object.keys(run.params)))].sort();
  const varying = names.filter(
    (name) => new Set(runs.map((run) => JSON.stringify(run.params[name] ?? null))).size > 1,
  );
  return { varying, same: names.filter((name) => !varying.includes(name)) };
}

/** Metric names: those with a goal first (in the pipeline's order), then the rest by name. */
export function metricNames(data: RunsPageData): string[] {
  const all = [...new Set(data.runs.flatMap((run) => Object.keys(run.metrics)))];
  const declared = Object.keys(data.goals).filter((name) => all.includes(name));
  return [...declared, ...all.filter((name) => !declared.includes(name)).sort()];
}

/** The index of the best run by a metric's goal (max or min), or null without a goal or values. */
export function bestRun(data: RunsPageData, metric: string): number | null {
  const goal = data.goals[metric]?.goal;
  if (!goal) return null;
  let best: number | null = null;
  data.runs.forEach((run, i) => {
    const value = run.metrics[metric];
    if (value === undefined) return;
    const current = best === null ? undefined : data.runs[best]!.metrics[metric];
    if (current === undefined || (goal === 'max' ? value > current : value < current)) best = i;
  });
  return best;
}
