import type { RunReport } from '../schemas/run-report.js';
import { sparkline } from '../core/text/sparkline.js';
import type { RunStatus, StageStatus } from '../schemas/statuses.js';
import { formatDuration, formatNumber, formatParams, formatSigned, short } from '../core/text/format.js';
import { stageDetail } from '../present/terminal/progress-printer.js';
import type { SeriesByMetric } from '../present/terminal/run-summary.js';

/** What a run's summary shows beyond its report. */
export interface RunMarkdownInput {
  report: RunReport;
  series: SeriesByMetric;
  /** Which commit ran, in words: on a pull request, the merge GitHub made of it. */
  commitNote: string | null;
  /** Why there is no baseline, when there is none: where it was looked for. */
  noBaselineNote: string;
  /** The end of each failed stage's output, and its traceback when one was found. */
  failures: { stage: string; tail: string; traceback: string | null }[];
}

const RUN_BADGES: Record<RunStatus, string> = {
  queued: '⏳ queued',
  running: '▶️ running',
  succeeded: '✅ succeeded',
  failed: '❌ failed',
  cancelled: '⊘ cancelled',
  timed_out: '⏱️ timed out',
  abandoned: '❌ abandoned',
};
const STAGE_BADGES: Record<StageStatus, string> = {
  ran: '✓ ran',
  cached: '● cached',
  failed: '✗ failed',
  timed_out: '⏱ timed out',
  cancelled: '⊘ cancelled',
  skipped: '– skipped',
  running: '▸ running',
  pending: '· pending',
};
/** Lines of a failing stage's output shown; the whole log is in the job's log. */
const TAIL_LINES = 25;

/** `✅ succeeded`, `❌ failed`: a run's status for a heading. */
export function runBadge(status: RunStatus): string {
  return RUN_BADGES[status];
}

/**
 * A run as GitHub-flavoured markdown, for the step summary, the check run and the
 * `summary` output: the stamp, the stages (ran or cached, from which run, why a stage
 * re-ran), the metrics against the baseline with Δ, Δ%, better/worse and each series'
 * sparkline, or a sentence saying there is no baseline, and for failures the end of the
 * stage's output and its traceback. Text from stages is escaped for tables and fenced in
 * code blocks, so it renders as text.
 */
export function renderRunMarkdown(input: RunMarkdownInput): string {
  const { report } = input;
  const { run } = report;
  const lines: string[] = [];
  lines.push(
    `### fluksio ${runBadge(run.status)}${run.groupId ? ` · ${cell(formatParams(run.params))}` : ''}`,
    '',
    `Run \`${run.id}\` ${run.status.replace('_', ' ')} in ${formatDuration(run.durationMs)}.${run.reason && run.status !== 'succeeded' ? ` ${cell(run.reason)}` : ''}`,
    '',
    '| | |',
    '|---|---|',
    `| commit | ${run.commit ? `\`${run.commit}\`` : '(no commit)'}${run.dirty ? ' (uncommitted changes)' : ''}${input.commitNote ? ` — ${cell(input.commitNote)}` : ''} |`,
    `| code | \`${short(run.codeDigest, 16)}\` |`,
    `| params | ${formatParams(run.params) ? `\`${cell(formatParams(run.params)).replace(/`/g, "'")}\`` : '(none)'} |`,
    `| pipeline | \`${cell(run.pipelinePath)}\` |`,
  );

  lines.push('', '#### Stages', '', '| stage | status | time | detail |', '|---|---|---|---|');
  for (const stage of report.stages) {
    lines.push(
      `| ${stage.name} | ${STAGE_BADGES[stage.status]} | ${formatDuration(stage.durationMs)} | ${cell(stageDetail(stage))} |`,
    );
  }
  const notes = report.stages.flatMap((stage) => stage.notes);
  if (notes.length > 0) lines.push('', ...notes.map((note) => `- ${cell(note)}`));

  lines.push('');
  if (report.baseline) {
    lines.push(
      `#### Metrics against run \`${short(report.baseline.id, 10)}\` at \`${short(report.baseline.commit, 10)}\``,
    );
  } else {
    lines.push('#### Metrics', '', `No baseline: ${cell(input.noBaselineNote)}`);
  }
  if (report.diff.length > 0) {
    lines.push(
      '',
      '| metric | baseline | this run | Δ | Δ% | | series |',
      '|---|---:|---:|---:|---:|---|---|',
    );
    for (const row of report.diff) {
      const mark = row.better === null ? '' : row.better ? '✅ better' : '❌ worse';
      const series = input.series[row.name]?.points.map((point) => point.value) ?? [];
      lines.push(
        `| ${cell(row.name)} | ${formatNumber(row.baseline)} | **${formatNumber(row.value)}** | ${formatSigned(row.delta)} | ${row.deltaPct === null ? '–' : formatSigned(Number(row.deltaPct.toFixed(2)), '%')} | ${mark} | ${sparkline(series)} |`,
      );
    }
  } else {
    lines.push('', 'The run reported no metrics.');
  }

  for (const stage of report.stages.filter(
    (each) => each.status === 'failed' || each.status === 'timed_out',
  )) {
    lines.push('', `#### Stage ${stage.name} ${stage.status === 'failed' ? 'failed' : 'timed out'}`, '');
    if (stage.error) lines.push(cell(stage.error), '');
    const failure = input.failures.find((each) => each.stage === stage.name);
    const tail = failure?.tail.split('\n').filter((line) => line !== '') ?? [];
    if (tail.length > 0) lines.push(codeBlock(tail.slice(-TAIL_LINES).join('\n')));
    if (failure?.traceback) lines.push('', 'Traceback:', '', codeBlock(failure.traceback));
  }

  const annotations = report.annotations.filter((note) => note.level !== 'notice');
  if (annotations.length > 0) {
    lines.push('', '#### Annotations', '');
    for (const note of annotations) {
      const where = note.path
        ? `\`${cell(note.path)}${note.line ? `:${note.line}` : ''}\``
        : `stage ${note.stage}`;
      lines.push(`- ${note.level} in ${where}: ${cell(note.message)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `✅ succeeded · loss 0.25, accuracy 0.91`: what a check run says at a glance. */
export function checkRunTitle(report: RunReport): string {
  const metrics = Object.entries(report.metrics)
    .slice(0, 3)
    .map(([name, value]) => `${name} ${formatNumber(value)}`)
    .join(', ');
  return `${runBadge(report.run.status)}${metrics ? ` · ${metrics}` : ''}`.slice(0, 255);
}

/** One row per run of a sweep, above each run's own summary. */
export function renderSweepMarkdown(groupId: string, reports: RunReport[], runSummaries: string[]): string {
  const succeeded = reports.filter((report) => report.run.status === 'succeeded').length;
  const metricNames = [...new Set(reports.flatMap((report) => Object.keys(report.metrics)))].slice(0, 6);
  const lines = [
    `## fluksio sweep \`${groupId}\`: ${succeeded} of ${reports.length} succeeded`,
    '',
    `| run | params | status |${metricNames.map((name) => ` ${cell(name)} |`).join('')}`,
    `|---|---|---|${metricNames.map(() => '---:|').join('')}`,
    ...reports.map(
      (report) =>
        `| \`${short(report.run.id, 10)}\` | ${cell(formatParams(report.run.params))} | ${runBadge(report.run.status)} |${metricNames.map((name) => ` ${formatNumber(report.metrics[name])} |`).join('')}`,
    ),
  ];
  return `${lines.join('\n')}\n\n${runSummaries.join('\n')}`;
}

/** Text for a table cell: on one line, with no column break or HTML of its own. */
function cell(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;');
}

/** A fenced block longer than any run of backticks inside, so the text cannot close it. */
function codeBlock(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}
