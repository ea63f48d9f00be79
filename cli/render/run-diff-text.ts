import { formatValue } from '../../core/text/format.js';
import { terminalText } from '../../present/terminal/terminal-text.js';
import { fitTable } from './fit-table.js';
import { renderMetricDiffTable } from './metric-diff-table.js';
import { wrapToWidth } from './wrap-to-width.js';
import { shownRows, type RunDiffView } from './run-diff-view.js';

/**
 * `fluksio diff` on a terminal or a pipe: the title, the params that changed, the metrics
 * that changed. Metric names are a stage's text: no escape sequence of theirs but colours
 * reaches the terminal (terminalText).
 */
export function renderRunDiffText(view: RunDiffView, width: number): string {
  return terminalText(runDiffText(view, width));
}

function runDiffText(view: RunDiffView, width: number): string {
  const lines = [view.title, ...view.notes].map((line) => wrapToWidth(line, width));
  if (!view.compared) return `${lines.join('\n')}\n`;
  const { params, metrics, hidden } = shownRows(view);
  lines.push('');
  if (params.length > 0)
    lines.push(
      fitTable({
        head: ['param', 'against', 'this run'],
        rows: params.map((row) => [row.name, valueText(row.against), valueText(row.value)]),
        width,
      }),
      '',
    );
  else lines.push('No param differs.', '');
  lines.push(metrics.length > 0 ? renderMetricDiffTable(metrics, width) : 'No metric differs.');
  if (hidden) lines.push(hidden);
  return `${lines.join('\n')}\n`;
}

function valueText(value: Parameters<typeof formatValue>[0] | null): string {
  return value === null ? '–' : formatValue(value);
}
