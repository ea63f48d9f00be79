import type { ExperimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';
import { formatNumber, formatParams } from '../../core/text/format.js';
import { terminalText } from '../../present/terminal/terminal-text.js';
import { experimentCells } from './experiment-cells.js';
import { fitTable } from './fit-table.js';
import { wrapToWidth } from './wrap-to-width.js';

/**
 * The runs as `fluksio runs` prints them, within `width`: a row per run, a column per
 * param and metric that tells them apart, and under the table what every run shares. On a
 * terminal (a finite width) the short id, a unique prefix that every command takes, leaves
 * room for the rest; a pipe gets whole ids. Too narrow a terminal wraps long cells, then
 * leaves out `when`, `commit`, the params from the last, the metrics from the last but the
 * first (named under the table). Dirty runs are starred, and the star is explained.
 */
export function renderRunsTable(
  runs: readonly ExperimentRun[],
  columns: ExperimentColumns,
  width: number,
): string {
  const { head, rows } = experimentCells(runs, columns, { shortIds: Number.isFinite(width) });
  const table = fitTable({
    head,
    rows,
    width,
    droppable: ['when', 'commit', ...[...columns.params].reverse(), ...columns.metrics.slice(1).reverse()],
  });
  const same = [
    formatParams(columns.sameParams),
    Object.entries(columns.sameMetrics)
      .map(([name, value]) => `${name}=${formatNumber(value)}`)
      .join(' '),
  ]
    .filter((part) => part)
    .join(' ');
  // Metric names are a stage's text: colours only reach the terminal (terminalText).
  return terminalText(
    [
      table,
      ...(same ? [wrapToWidth(`same in every run: ${same}`, width)] : []),
      ...(runs.some((run) => run.dirty) ? ['* dirty: uncommitted changes'] : []),
      '',
    ].join('\n'),
  );
}
