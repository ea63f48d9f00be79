import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { ParamValue } from '../../schemas/key-inputs.js';
import type { RunFilter } from '../../schemas/run-filter.js';
import type { RunSort } from '../../schemas/run-sort.js';
import { RunStatus } from '../../schemas/statuses.js';
import { formatValue } from '../text/format.js';
import { experimentField, fieldValue, knownNames, type ExperimentField } from './experiment-field.js';
import type { ExperimentRun } from './experiment-run.js';

export interface RunSelection {
  /** Every one must hold (`--filter`, repeatable). */
  filters: readonly RunFilter[];
  /** `--sort`; null keeps the runs newest first. */
  sort: RunSort | null;
  /** `--desc` (true) or `--asc` (false); null: `-NAME`, else the default direction. */
  descending: boolean | null;
  /** At most this many runs, taken after filtering and sorting. */
  limit: number;
  /** The pipeline's metric goals: a metric with one sorts best first by default. */
  goals: MetricGoals;
}

/**
 * The runs `fluksio runs` shows: those every filter holds for, sorted, the first `limit`.
 * `runs` come newest first and stay so among equals. A metric with a goal sorts best
 * first unless told otherwise, `when` newest first, anything else ascending; runs
 * without the value sort last either way. Problems name each filter or sort that cannot
 * apply to these runs (an unknown name, an order on a status); with any, no runs.
 */
export function selectRuns<T extends ExperimentRun>(
  runs: readonly T[],
  selection: RunSelection,
): { runs: T[]; problems: string[] } {
  const problems: string[] = [];
  const resolved: { filter: RunFilter; field: ExperimentField }[] = [];
  for (const filter of selection.filters) {
    const field = experimentField(filter.name, runs);
    const problem = filterProblem(filter, field, runs);
    if (problem) problems.push(`--filter "${filter.text}": ${problem}`);
    else if (field) resolved.push({ filter, field });
  }
  const sortField = selection.sort ? experimentField(selection.sort.name, runs) : null;
  if (selection.sort && !sortField && runs.length > 0)
    problems.push(`--sort ${selection.sort.name}: no run has it (${knownNames(runs)})`);
  if (problems.length > 0) return { runs: [], problems };

  const kept = runs.filter((run) => resolved.every(({ filter, field }) => holds(run, filter, field)));
  if (sortField) {
    const descending =
      selection.descending ?? selection.sort?.descending ?? defaultDescending(sortField, selection.goals);
    kept.sort((a, b) => compareValues(fieldValue(a, sortField), fieldValue(b, sortField), descending));
  }
  return { runs: kept.slice(0, selection.limit), problems };
}

/** Why `filter` cannot apply to `runs`, or null when it can. */
function filterProblem(
  filter: RunFilter,
  field: ExperimentField | null,
  runs: readonly ExperimentRun[],
): string | null {
  if (!field) return runs.length === 0 ? null : `no run has "${filter.name}" (${knownNames(runs)})`;
  if (field.kind !== 'run') return null;
  if (field.name === 'when') return 'when sorts (--sort when), it does not filter';
  if (filter.op !== '=' && filter.op !== '!=') return `${field.name} takes = or !=, not ${filter.op}`;
  if (field.name === 'status' && !RunStatus.safeParse(filter.value).success)
    return `"${filter.value}" is not a run status (one of ${RunStatus.options.join(', ')})`;
  return null;
}

/** Whether `run` passes `filter`; a run without the value passes only `!=`. */
function holds(run: ExperimentRun, filter: RunFilter, field: ExperimentField): boolean {
  const value = fieldValue(run, field);
  if (filter.op === '=' || filter.op === '!=') {
    const equal = value !== undefined && equals(value, filter.value, field);
    return filter.op === '=' ? equal : !equal;
  }
  if (typeof value !== 'number') return false;
  const bound = Number(filter.value);
  switch (filter.op) {
    case '<':
      return value < bound;
    case '<=':
      return value <= bound;
    case '>':
      return value > bound;
    case '>=':
      return value >= bound;
  }
}

/**
 * A value against what a filter wrote: numbers by value (`lr=0.10` is `lr=0.1`), an id or
 * commit by its start (any case, as commands take them), anything else as it is typed.
 */
function equals(value: ParamValue, written: string, field: ExperimentField): boolean {
  if (field.kind === 'run' && (field.name === 'id' || field.name === 'commit'))
    return String(value).toLowerCase().startsWith(written.toLowerCase());
  if (typeof value === 'number') return written.trim() !== '' && value === Number(written);
  return String(value) === written || formatValue(value) === written;
}

function defaultDescending(field: ExperimentField, goals: MetricGoals): boolean {
  if (field.kind === 'metric') return goals[field.name]?.goal === 'max';
  return field.kind === 'run' && field.name === 'when';
}

/** Numbers before text before booleans; missing values last whatever the direction. */
function compareValues(a: ParamValue | undefined, b: ParamValue | undefined, descending: boolean): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  const rank = (value: ParamValue) => (typeof value === 'number' ? 0 : typeof value === 'string' ? 1 : 2);
  const order =
    rank(a) !== rank(b)
      ? rank(a) - rank(b)
      : typeof a === 'string'
        ? a.localeCompare(String(b))
        : Number(a) - Number(b);
  return descending ? -order : order;
}
