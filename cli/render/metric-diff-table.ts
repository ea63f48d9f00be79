import type { MetricDiffRow } from '../../schemas/metric-diff.js';
import { formatNumber, formatSigned, formatDeltaPct } from '../../core/text/format.js';
import { fitTable } from './fit-table.js';

/** A run's metrics against another's, as `fluksio diff` prints them, within `width`. */
export function renderMetricDiffTable(diff: readonly MetricDiffRow[], width: number): string {
  const rows = diff.map((row) => [
    row.name,
    formatNumber(row.baseline),
    formatNumber(row.value),
    formatSigned(row.delta),
    formatDeltaPct(row.deltaPct),
    row.better === null ? '' : row.better ? '✅ better' : '❌ worse',
  ]);
  return fitTable({
    head: ['metric', 'against', 'this run', 'Δ', 'Δ%', ''],
    rows,
    width,
    droppable: ['Δ%'],
  });
}
