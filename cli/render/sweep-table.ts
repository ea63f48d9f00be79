import type { Colors } from 'picocolors/types.js';
import { formatNumber, formatValue, short } from '../../schemas/format.js';
import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { RunReport } from '../../schemas/run-report.js';
import { fitTable } from './fit-table.js';

/**
 * The end of a sweep: one table of its members — the params that vary between them, each
 * metric with its change against the sweep's baseline (the same run for every member) —
 * and, for each metric with a goal, the best member. Within `width`; a best value is
 * marked `★`.
 */
export function renderSweepTable(input: {
  groupId: string;
  reports: readonly RunReport[];
  goals: MetricGoals;
  width: number;
  colors: Colors;
}): string {
  const { reports, goals, colors } = input;
  const varying = [...new Set(reports.flatMap((report) => Object.keys(report.run.params)))].filter(
    (name) => new Set(reports.map((report) => JSON.stringify(report.run.params[name] ?? null))).size > 1,
  );
  // In the diff's order: the metrics with a goal as the pipeline declares them, then the rest.
  const metrics = [...new Set(reports.flatMap((report) => report.diff.map((row) => row.name)))];
  const best = new Map<string, string>();
  for (const name of metrics) {
    const goal = goals[name]?.goal;
    if (!goal) continue;
    let winner: RunReport | null = null;
    for (const report of reports) {
      const value = report.metrics[name];
      if (report.run.status !== 'succeeded' || value === undefined) continue;
      const held = winner?.metrics[name];
      if (held === undefined || (goal === 'min' ? value < held : value > held)) winner = report;
    }
    if (winner) best.set(name, winner.run.id);
  }
  const rows = reports.map((report) => [
    short(report.run.id, 12),
    report.run.status,
    ...varying.map((name) => {
      const value = report.run.params[name];
      return value === undefined ? '–' : formatValue(value);
    }),
    ...metrics.map((name) => {
      const row = report.diff.find((each) => each.name === name);
      const value = formatNumber(report.metrics[name]);
      const delta =
        row?.deltaPct === null || row?.deltaPct === undefined
          ? ''
          : ` (${row.deltaPct >= 0 ? '+' : '−'}${Math.abs(row.deltaPct).toFixed(1)}%)`;
      return `${best.get(name) === report.run.id ? '★ ' : ''}${value}${delta}`;
    }),
  ]);
  const baselines = new Set(reports.map((report) => report.baseline?.id ?? null));
  const baseline = baselines.size === 1 ? (reports[0]?.baseline ?? null) : null;
  const against = baseline
    ? `, each against run ${short(baseline.id, 10)} at ${short(baseline.commit, 10)}`
    : baselines.size > 1
      ? ', each against its baseline'
      : ' (no baseline: no earlier successful run on this commit or its ancestors)';
  const lines = [
    colors.bold(`Sweep ${short(input.groupId, 12)}: ${reports.length} runs${against}`),
    // Too narrow a terminal loses the last metrics first; the pipeline's first goal stays.
    fitTable({
      head: ['run', 'status', ...varying, ...metrics],
      rows,
      width: input.width,
      droppable: ['status', ...[...metrics].reverse()],
    }),
  ];
  if (best.size > 0) {
    const winners = [...best].map(([name, id]) => {
      const winner = reports.find((report) => report.run.id === id);
      return [
        `${name} (${goals[name]?.goal})`,
        short(id, 12),
        ...varying.map((param) => formatValue(winner?.run.params[param] ?? '')),
      ];
    });
    lines.push('', fitTable({ head: ['best by', 'run', ...varying], rows: winners, width: input.width }));
  }
  return `${lines.join('\n')}\n`;
}
