import { markdownTable } from 'markdown-table';
import stringWidth from 'string-width';
import type { ExperimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';
import { escapeTableCell } from '../../present/github/markdown.js';
import { experimentCells } from './experiment-cells.js';

/**
 * `fluksio runs --md`: the experiment table as GitHub-flavoured markdown, for a pull
 * request or a README. Every cell is escaped (a `|` in a param value cannot split a
 * row); metrics align right, as numbers do.
 */
export function renderRunsMarkdown(runs: readonly ExperimentRun[], columns: ExperimentColumns): string {
  const { head, rows, lead } = experimentCells(runs, columns, { shortIds: true });
  const align = head.map((_, index) =>
    index >= lead + columns.params.length && index < head.length - 1 ? 'r' : 'l',
  );
  return `${markdownTable(
    [head, ...rows].map((row) => row.map(escapeTableCell)),
    { align, stringLength: stringWidth },
  )}\n`;
}
