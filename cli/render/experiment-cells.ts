import type { ExperimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';
import { formatNumber, formatValue, short } from '../../core/text/format.js';

/** The table of `fluksio runs` as text cells, for the terminal and for markdown. */
export interface ExperimentCells {
  head: string[];
  rows: string[][];
  /** How many of the first columns are the run's own (id, status, commit). */
  lead: number;
}

/**
 * A heading and a row per run: id (whole, or the 12-character prefix every command
 * takes when `shortIds`), status, commit (`*` when dirty), the columns' params and
 * metrics (`–` when the run has none), and when the run was created (UTC, to the minute).
 */
export function experimentCells(
  runs: readonly ExperimentRun[],
  columns: ExperimentColumns,
  { shortIds }: { shortIds: boolean },
): ExperimentCells {
  return {
    head: ['run', 'status', 'commit', ...columns.params, ...columns.metrics, 'when'],
    rows: runs.map((run) => [
      shortIds ? short(run.id, 12) : run.id,
      run.status,
      `${short(run.commit, 10)}${run.dirty ? '*' : ''}`,
      ...columns.params.map((name) => {
        const value = run.params[name];
        return value === undefined ? '–' : formatValue(value);
      }),
      ...columns.metrics.map((name) => formatNumber(run.metrics[name])),
      run.createdAt.toISOString().replace('T', ' ').slice(0, 16),
    ]),
    lead: 3,
  };
}
