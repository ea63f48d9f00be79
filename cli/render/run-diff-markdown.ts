import { markdownTable } from 'markdown-table';
import stringWidth from 'string-width';
import { formatNumber, formatSigned, formatValue, formatDeltaPct } from '../../core/text/format.js';
import { escapeMarkdown, escapeTableCell } from '../../present/github/markdown.js';
import { betterMark } from '../../present/github/metric-table.js';
import { shownRows, type RunDiffView } from './run-diff-view.js';

/**
 * `fluksio diff --md`: the comparison as GitHub-flavoured markdown for a pull request —
 * the title in bold, the params that changed, the metrics that changed with Δ, Δ% and
 * ✅/❌ by goal.
 */
export function renderRunDiffMarkdown(view: RunDiffView): string {
  const lines = [
    `**${escapeMarkdown(view.title)}**`,
    ...view.notes.map((note) => `\n${escapeMarkdown(note)}`),
  ];
  if (!view.compared) return `${lines.join('\n')}\n`;
  const { params, metrics, hidden } = shownRows(view);
  const table = (rows: string[][], align: string[]) =>
    markdownTable(
      rows.map((row) => row.map(escapeTableCell)),
      { align, stringLength: stringWidth },
    );
  const value = (each: Parameters<typeof formatValue>[0] | null) => (each === null ? '–' : formatValue(each));
  lines.push('');
  lines.push(
    params.length > 0
      ? table(
          [
            ['param', 'against', 'this run'],
            ...params.map((row) => [row.name, value(row.against), value(row.value)]),
          ],
          ['l', 'l', 'l'],
        )
      : 'No param differs.',
    '',
  );
  lines.push(
    metrics.length > 0
      ? table(
          [
            ['metric', 'against', 'this run', 'Δ', 'Δ%', ''],
            ...metrics.map((row) => [
              row.name,
              formatNumber(row.baseline),
              formatNumber(row.value),
              formatSigned(row.delta),
              formatDeltaPct(row.deltaPct),
              betterMark(row.better).trim(),
            ]),
          ],
          ['l', 'r', 'r', 'r', 'r', 'l'],
        )
      : 'No metric differs.',
  );
  if (hidden) lines.push('', hidden);
  return `${lines.join('\n')}\n`;
}
