import type { Colors } from 'picocolors/types.js';
import { formatNumber, formatValue, short } from '../../core/text/format.js';
import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { RunReport } from '../../schemas/run-report.js';
import { compareSweep, sweepDelta } from '../../present/sweep-comparison.js';
import { terminalText } from '../../present/terminal/terminal-text.js';
import { fitTable } from './fit-table.js';

/**
 * The end of a sweep: one table of its members — the params that vary between them, each
 * metric with its change against the sweep's baseline (the same run for every member) —
 * and, for each metric with a goal, the best member. Within `width`; a best value is
 * marked `★`. The comparison is the one the pull request's sweep comment shows
 * (present/sweep-comparison.ts).
 */
export function renderSweepTable(input: {
  groupId: string;
  reports: readonly RunReport[];
  goals: MetricGoals;
  width: number;
  colors: Colors;
}): string {
  const { reports, goals, colors } = input;
  const comparison = compareSweep({
    members: reports.map((report) => ({
      id: report.run.id,
      status: report.run.status,
      params: report.run.params,
      metrics: report.metrics,
      // The baseline's values, as the member's own diff carries them.
      baselineMetrics: report.baseline
        ? Object.fromEntries(
            report.diff.flatMap((row) => (row.baseline === null ? [] : [[row.name, row.baseline] as const])),
          )
        : null,
    })),
    goals,
  });
  const { varying, metrics } = comparison;
  const rows = comparison.rows.map(({ member, diff, best }) => [
    short(member.id, 12),
    member.status,
    ...varying.map((name) => {
      const value = member.params[name];
      return value === undefined ? '–' : formatValue(value);
    }),
    ...metrics.map((name) => {
      const delta = sweepDelta(diff.get(name));
      return `${best.has(name) ? '★ ' : ''}${formatNumber(member.metrics[name])}${delta ? ` ${delta}` : ''}`;
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
  // The first member holding each best value (ties: the earliest).
  const winners = [...comparison.bestValues.keys()].flatMap((name) => {
    const winner = comparison.rows.find((row) => row.best.has(name))?.member;
    return winner
      ? [
          [
            `${name} (${goals[name]?.goal})`,
            short(winner.id, 12),
            ...varying.map((param) => formatValue(winner.params[param] ?? '')),
          ],
        ]
      : [];
  });
  if (winners.length > 0)
    lines.push('', fitTable({ head: ['best by', 'run', ...varying], rows: winners, width: input.width }));
  // Metric names are a stage's text: colours only reach the terminal (terminalText).
  return terminalText(`${lines.join('\n')}\n`);
}
