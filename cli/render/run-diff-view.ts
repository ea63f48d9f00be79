import type { ParamDiffRow } from '../../core/experiments/diff-params.js';
import type { MetricDiffRow } from '../../schemas/metric-diff.js';
import { short } from '../../core/text/format.js';

/** What `fluksio diff` shows, for the terminal and for markdown. */
export interface RunDiffView {
  /** `run 01JD4XABCD (at 1a2b3c4d5e) against run 01JD3Y… (main, at 9f8e7d6c5b)`. */
  title: string;
  /** How a side was found when that needs saying (an ancestor's run, an ambiguous name). */
  notes: string[];
  /** False when there is nothing to compare with (a run without a baseline). */
  compared: boolean;
  params: ParamDiffRow[];
  metrics: MetricDiffRow[];
  /** `--all`: every param and metric, not only those that changed. */
  all: boolean;
}

/** The rows a view shows: with `all` every one, else those that changed. */
export function shownRows(view: RunDiffView): {
  params: ParamDiffRow[];
  metrics: MetricDiffRow[];
  hidden: string;
} {
  const params = view.all ? view.params : view.params.filter((row) => row.changed);
  const metrics = view.all ? view.metrics : view.metrics.filter((row) => row.value !== row.baseline);
  const same = [
    plural(view.params.length - params.length, 'param'),
    plural(view.metrics.length - metrics.length, 'metric'),
  ].filter((part) => part);
  return {
    params,
    metrics,
    hidden: same.length > 0 ? `${same.join(' and ')} unchanged (--all shows them)` : '',
  };
}

function plural(count: number, noun: string): string {
  return count === 0 ? '' : `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * A side of a comparison in a title: `01JD4XABCD (main, at 9f8e7d6c5b)`,
 * `01JD4XABCD (at 1a2b3c4d5e, dirty)`; `label` says how it was named or found.
 */
export function describeSide(
  run: { id: string; commit: string | null; dirty: boolean },
  label: string | null,
): string {
  const where = [label, `at ${short(run.commit, 10)}${run.dirty ? ', dirty' : ''}`].filter((part) => part);
  return `${short(run.id, 10)} (${where.join(', ')})`;
}
