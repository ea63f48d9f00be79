import Table from 'cli-table3';
import type { Colors } from 'picocolors/types.js';
import type { MetricSeries } from '../../schemas/metric-series.js';
import type { RunReport } from '../../schemas/run-report.js';
import { sparkline } from '../../core/text/sparkline.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import {
  formatDuration,
  formatNumber,
  formatParams,
  formatSigned,
  short,
  formatDeltaPct,
} from '../../core/text/format.js';
import { describeStageUsage, formatCompute } from '../../core/text/format-compute.js';
import { stageDetail, statusBadge } from './progress-printer.js';
import { terminalText } from './terminal-text.js';
import { borderlessChars } from './borderless-chars.js';

/** Metric name → its series, as the store returns them and `GET /api/v1/runs/:id/metrics` answers them. */
export type SeriesByMetric = Record<string, MetricSeries>;

export interface RunSummaryInput {
  report: RunReport;
  series: SeriesByMetric;
  /** The stages' records (what is shown of them), for the log tails of stages that failed. */
  stages: Pick<StageRecord, 'name' | 'status' | 'error' | 'logTail'>[];
  /** Traceback text per failed stage, when one was found in its output. */
  tracebacks: { stage: string; text: string }[];
  /**
   * For a run executed by a runner: how it sandboxed the stages, null for not at all;
   * absent for a local run (which runs as its user).
   */
  sandbox?: string | null;
  /**
   * The stages' output was printed live above this summary (`fluksio run` on a terminal or
   * a pipe): a failed stage's log tail and traceback are not printed again.
   */
  outputShown?: boolean;
}

/** Lines of a log tail shown under a failure; the whole log is in `fluksio show`. */
const TAIL_LINES = 25;

/** Borderless tables: aligned columns that paste cleanly into an issue or a chat. */
function plainTable(head: string[]): Table.Table {
  return new Table({
    head,
    chars: borderlessChars('  ', '  '),
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
}

/** A plain table's lines without the spaces cli-table3 pads its last column with. */
function tableText(table: Table.Table): string {
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

/**
 * The end-of-run summary (DESIGN §9): the stamp, the stages with ran/cached and why,
 * the metrics against the baseline with Δ, Δ%, better/worse by goal and a sparkline per
 * series, and for a failure the failing stage's log tail and traceback.
 */
export function renderRunSummary(input: RunSummaryInput, colors: Colors): string {
  const { report } = input;
  const { run } = report;
  const lines: string[] = [];
  const verdict =
    run.status === 'succeeded'
      ? colors.green(colors.bold('succeeded'))
      : colors.red(colors.bold(run.status.replace('_', ' ')));
  lines.push('', `${colors.bold('Run')} ${run.id} ${verdict} in ${formatDuration(run.durationMs)}`);
  if (run.reason && run.status !== 'succeeded') lines.push(`  ${colors.red(run.reason)}`);
  lines.push(
    `  commit   ${run.commit ? short(run.commit, 12) : '(no commit yet)'}${run.dirty ? colors.yellow(run.dirtyReasons.length > 0 ? ' (dirty: the code changed while stages ran)' : ' (dirty: uncommitted changes)') : ''}`,
    `  code     ${short(run.codeDigest, 16)}`,
    `  params   ${formatParams(run.params) || '(none)'}  ${colors.dim(`digest ${short(run.paramsDigest, 12)}`)}`,
    `  pipeline ${run.pipelinePath}`,
  );
  if (run.selection) {
    const asked = `${run.selection.named.join(' ')}${run.selection.downstream ? ' --downstream' : ''}`;
    lines.push(
      `  stages   ${run.selection.stages.join(', ')} ${colors.dim(`(asked for ${asked}: a partial run, never a baseline)`)}`,
    );
  }
  if (input.sandbox !== undefined && run.startedAt !== null) {
    lines.push(`  sandbox  ${input.sandbox ?? colors.yellow("none: the stages ran as the runner's user")}`);
  }
  if (run.cpuSeconds !== null || run.gpuSeconds !== null) {
    const compute = formatCompute({ cpuSeconds: run.cpuSeconds ?? 0, gpuSeconds: run.gpuSeconds ?? 0 });
    lines.push(`  compute  ${compute} ${colors.dim('(Slurm jobs, every attempt)')}`);
  }

  const stages = plainTable(['stage', 'status', 'time', 'detail']);
  for (const stage of report.stages) {
    stages.push([
      colors.bold(stage.name),
      statusBadge(stage.status, colors),
      formatDuration(stage.durationMs),
      stageDetail(stage),
    ]);
  }
  lines.push('', colors.bold('Stages'), tableText(stages));
  const keying = report.stages.flatMap((stage) => [
    ...(stage.usage ? [`${stage.name}: ${describeStageUsage(stage.usage)}`] : []),
    ...stage.notes,
  ]);
  if (keying.length > 0) lines.push(...keying.map((note) => `  ${colors.dim(note)}`));

  const notes = [
    ...run.dirtyReasons.map((reason) => `dirty: ${reason}`),
    ...report.stages.flatMap((stage) =>
      stage.dirtyReasons.length > 0 ? [`${stage.name} was not cached: its inputs changed while it ran`] : [],
    ),
    ...report.stages.flatMap((stage) => stage.warnings),
  ];
  if (notes.length > 0) {
    lines.push('', colors.yellow(colors.bold('Warnings')));
    for (const note of notes) lines.push(`  ${colors.yellow('!')} ${note}`);
  }

  if (report.diff.length > 0) {
    const heading = report.baseline
      ? `Metrics against run ${short(report.baseline.id, 10)} at ${short(report.baseline.commit, 10)}`
      : 'Metrics (no baseline: no earlier successful run on this commit or its ancestors)';
    const table = plainTable(['metric', 'baseline', 'this run', 'Δ', 'Δ%', '', 'series']);
    for (const row of report.diff) {
      const mark = row.better === null ? '' : row.better ? colors.green('✅ better') : colors.red('❌ worse');
      const series = input.series[row.name]?.points.map((point) => point.value) ?? [];
      table.push([
        row.name,
        formatNumber(row.baseline),
        colors.bold(formatNumber(row.value)),
        formatSigned(row.delta),
        formatDeltaPct(row.deltaPct),
        mark,
        colors.cyan(sparkline(series)),
      ]);
    }
    lines.push('', colors.bold(heading), tableText(table));
  }

  for (const stage of input.stages.filter(
    (each) => each.status === 'failed' || each.status === 'timed_out',
  )) {
    lines.push(
      '',
      colors.red(
        colors.bold(
          `Stage ${stage.name} ${stage.status === 'failed' ? 'failed' : 'timed out'}: ${terminalText(stage.error ?? '')}`,
        ),
      ),
    );
    if (input.outputShown) {
      lines.push(
        colors.dim(
          `  its output is above; the whole log: fluksio show ${short(report.run.id, 10)} --log ${stage.name}`,
        ),
      );
      continue;
    }
    const tracebacks = input.tracebacks.filter((each) => each.stage === stage.name);
    const tail = tailBefore(
      stage.logTail.split('\n').filter((line, index, all) => line || index < all.length - 1),
      tracebacks[0]?.text.split('\n')[0],
    ).slice(-TAIL_LINES);
    if (tail.length > 0) {
      lines.push(
        colors.dim(
          `  last ${tail.length} lines of its output${tracebacks.length > 0 ? ' before the traceback' : ''}:`,
        ),
      );
      for (const line of tail) lines.push(`  ${colors.dim('│')} ${terminalText(line)}`);
    }
    for (const traceback of tracebacks) {
      lines.push(colors.dim('  traceback:'));
      for (const line of traceback.text.split('\n')) lines.push(`  ${colors.red('│')} ${terminalText(line)}`);
    }
  }

  if (report.annotations.length > 0) {
    lines.push('', colors.bold('Annotations'));
    for (const note of report.annotations) {
      const where = note.path ? `${note.path}${note.line ? `:${note.line}` : ''}` : `(stage ${note.stage})`;
      const level =
        note.level === 'error'
          ? colors.red('error')
          : note.level === 'warning'
            ? colors.yellow('warning')
            : 'notice';
      lines.push(`  ${where}  ${level}  ${note.message}`);
    }
  }
  // Annotations, metric names, warnings and reasons are a stage's text as much as its log
  // is (a fork's, once approved): the whole summary keeps its colours and nothing else.
  return terminalText(`${lines.join('\n')}\n`);
}

/**
 * The log tail's lines before a traceback that starts with `firstLine` (the traceback is
 * shown on its own, so it is not shown twice); the whole tail when there is no traceback,
 * none when the traceback began before the tail did.
 */
function tailBefore(tail: string[], firstLine: string | undefined): string[] {
  if (firstLine === undefined) return tail;
  const start = tail.indexOf(firstLine);
  return start < 0 ? [] : tail.slice(0, start);
}
