import { formatNumber, formatSigned, formatDeltaPct } from '../../core/text/format.js';
import { sparkline } from '../../core/text/sparkline.js';
import type { RunView } from '../run-view.js';
import { escapeMarkdown } from './markdown.js';

/**
 * The metrics section (DESIGN §7): which baseline, or why there is none, then a row per
 * metric with baseline, this run, Δ, Δ%, ✅/❌ by goal and the series' sparkline.
 */
export function metricLines({ status, metrics, metricDiff, series }: RunView): string[] {
  const lines = ['### Metrics', ''];
  lines.push(
    metricDiff.baseline
      ? `Against ${escapeMarkdown(metricDiff.baseline.label)}, run \`${metricDiff.baseline.runId}\`.`
      : `No baseline: ${escapeMarkdown(metricDiff.noBaseline)}`,
    '',
  );
  const active = status === 'queued' || status === 'running';
  if (active && Object.keys(metrics).length === 0) return [...lines, 'No metrics yet.'];
  if (metricDiff.rows.length === 0) return [...lines, 'No metrics reported.'];
  lines.push('| metric | baseline | this run | Δ | Δ% | | series |', '|---|--:|--:|--:|--:|---|---|');
  for (const row of metricDiff.rows) {
    const points = series[row.name]?.points.map((point) => point.value) ?? [];
    const pct = formatDeltaPct(row.deltaPct);
    lines.push(
      `| ${escapeMarkdown(row.name)} | ${formatNumber(row.baseline)} | **${formatNumber(row.value)}** | ${formatSigned(row.delta)} | ${pct} | ${betterMark(row.better).trim()} | ${sparkline(points)} |`,
    );
  }
  return lines;
}

/** ` ✅` when a change goes the goal's way, ` ❌` against it, nothing without a goal. */
export function betterMark(better: boolean | null): string {
  return better === null ? '' : better ? ' ✅' : ' ❌';
}
