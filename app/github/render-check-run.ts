import type { Annotation } from '../../schemas/annotation.js';
import { checkRunConclusion } from '../../schemas/check-run-conclusion.js';
import { formatDuration, formatNumber, formatParams, formatSigned, short } from '../../schemas/format.js';
import { diffMetrics, type MetricGoals } from '../../schemas/metric-diff.js';
import { sparkline } from '../../schemas/sparkline.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { StageStatus } from '../../schemas/statuses.js';
import type { Run } from '../../schemas/tables/runs.js';
import { clip, clipBytes, codeBlock, codeSpan, escapeMarkdown, fitMarkdown, oneLine } from './markdown.js';

/**
 * GitHub's limits on a check run (REST "Create a check run"). The summary and text limits
 * are documented as 65,535 characters but enforced in UTF-8 bytes ("summary exceeds a
 * maximum bytesize of 65535", github/docs#35252), so every bound here counts bytes, which
 * also bounds characters. Annotation fields are "64 KB": read as the smaller of 64,000 and
 * 65,536 bytes.
 */
export const GITHUB_LIMITS = {
  title: 255,
  summaryBytes: 65_535,
  textBytes: 65_535,
  annotationBytes: 64_000,
  annotationTitle: 255,
  actions: 3,
  actionLabel: 20,
  actionDescription: 40,
  actionIdentifier: 20,
  checkName: 100,
} as const;

/** One annotation as the Checks API takes it. */
export interface GitHubAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
}

/** A button on a completed check run; GitHub sends `check_run.requested_action` with its identifier. */
export interface CheckRunAction {
  label: string;
  description: string;
  identifier: string;
}

/** Everything a check-run create or update carries, ready to send (the outbox pages the annotations). */
export interface RenderedCheckRun {
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | 'timed_out' | 'action_required' | null;
  title: string;
  summary: string;
  text: string;
  /** All of them; GitHub takes at most 50 per request. */
  annotations: GitHubAnnotation[];
  actions: CheckRunAction[];
}

export interface CheckRunInput {
  run: Run;
  stages: StageRecord[];
  annotations: Annotation[];
  /** The run's metrics so far (final ones once it finished), flattened to dotted names. */
  metrics: Record<string, number>;
  /** The run compared against (DESIGN §7) and how to name it: `main @ 1a2b3c4 (merge-base)`. */
  baseline: { run: Run; label: string } | null;
  series: Record<string, { stage: string; points: { step: number; value: number }[] }>;
  goals: MetricGoals;
  runner: string | null;
  /** The control plane as people reach it: where `fluksio show --url` finds the run and its logs. */
  serverUrl: string;
  tracebacks: { stage: string; text: string }[];
  checkName: string;
  /** An image of the main metric's curves against the baseline's (a signed link), shown under the metrics. */
  chart?: { metric: string; url: string } | null;
}

/** Lines of a failing stage's output and of a traceback shown in the summary. */
const TAIL_LINES = 25;
const TRACEBACK_LINES = 40;
/** A log line longer than this is cut in the summary (a progress bar redrawn on one line). */
const LINE_CHARS = 1_000;
/** Reasons of one stage shown in the stages table; all of them are in the text. */
const CELL_CHARS = 300;

export const RERUN_ACTIONS: readonly CheckRunAction[] = [
  { label: 'Re-run', description: 'Run this commit again, using the cache', identifier: 'rerun' },
  {
    label: 'Re-run without cache',
    description: 'Run again, executing every stage',
    identifier: 'rerun-no-cache',
  },
];

/**
 * A run as a GitHub check run (DESIGN §6, §8): status and conclusion from the run state;
 * a title; a summary with the stamp (or the waiting reason), the failure's traceback and
 * log tails, the metric diff against the baseline with sparklines, and the stages with
 * ran/cached and why; a text with every stage's reasons and every annotation; all
 * annotations on repository files; re-run buttons once completed. Every GitHub limit is
 * respected with visible truncation pointing at `fluksio show` and the logs.
 */
export function renderCheckRun(input: CheckRunInput): RenderedCheckRun {
  const { run } = input;
  const pointer = codeSpan(showCommand(input));
  const completed = run.status !== 'queued' && run.status !== 'running';
  return {
    name: input.checkName,
    status: run.status === 'queued' ? 'queued' : run.status === 'running' ? 'in_progress' : 'completed',
    conclusion: checkRunConclusion(run.status),
    title: clip(titleOf(input), GITHUB_LIMITS.title),
    summary: fitMarkdown(summaryOf(input), GITHUB_LIMITS.summaryBytes, pointer),
    text: fitMarkdown(textOf(input), GITHUB_LIMITS.textBytes, pointer),
    annotations: input.annotations.flatMap((note) => {
      const converted = toGitHubAnnotation(note);
      return converted ? [converted] : [];
    }),
    actions: completed ? [...RERUN_ACTIONS] : [],
  };
}

/** The command that shows the run from the control plane. */
function showCommand({ run, serverUrl }: CheckRunInput): string {
  return `fluksio show ${run.id} --url ${serverUrl}`;
}

function titleOf({ run, stages, metrics, baseline, goals }: CheckRunInput): string {
  const reason = run.statusReason ? `: ${oneLine(run.statusReason)}` : '';
  switch (run.status) {
    case 'queued':
      return `Queued: ${oneLine(run.statusReason ?? 'waiting for a runner')}`;
    case 'running': {
      const done = stages.filter((stage) => stage.status === 'ran' || stage.status === 'cached').length;
      const active = stages.filter((stage) => stage.status === 'running').map((stage) => stage.name);
      return `Running${active.length ? ` ${active.join(', ')}` : ''} (${done} of ${stages.length} stages done)`;
    }
    case 'succeeded': {
      const headline = diffMetrics(metrics, baseline?.run.metrics ?? null, goals)
        .filter((row) => goals[row.name] && row.value !== null)
        .map(
          (row) =>
            `${row.name} ${formatNumber(row.value)}${row.delta === null ? '' : ` (${formatSigned(row.delta)}${mark(row.better)})`}`,
        );
      return `Succeeded in ${formatDuration(run.durationMs)}${headline.length ? ` · ${headline.join(', ')}` : ''}`;
    }
    case 'failed': {
      const failed = stages.find((stage) => stage.status === 'failed' || stage.status === 'timed_out');
      const why = run.statusReason ?? (failed ? `stage ${failed.name}: ${failed.error ?? 'failed'}` : '');
      return `Failed${why ? `: ${oneLine(why)}` : ''}`;
    }
    case 'cancelled':
      return `Cancelled${reason}`;
    case 'timed_out':
      return `Timed out${reason}`;
    case 'abandoned':
      return `Abandoned${reason || ': its runner stopped responding and no retries are left'}`;
  }
}

function summaryOf(input: CheckRunInput): string {
  const { run } = input;
  const lines: string[] = [];
  const hasFailedStage = input.stages.some(
    (stage) => stage.status === 'failed' || stage.status === 'timed_out',
  );
  if (run.status === 'queued') {
    lines.push(`⏳ **${escapeMarkdown(run.statusReason ?? 'Waiting for a runner')}**`, '');
  } else if (run.statusReason && run.status !== 'succeeded' && run.status !== 'running' && !hasFailedStage) {
    // A failed stage's own section below says why; this line is for cancels, timeouts and lost runners.
    lines.push(`**${escapeMarkdown(run.statusReason)}**`, '');
  }
  lines.push(...stampLines(input), '');
  lines.push(...failureLines(input));
  lines.push(...metricLines(input), '');
  if (input.chart) lines.push(`![${escapeMarkdown(input.chart.metric)} curves](${input.chart.url})`, '');
  lines.push('### Stages', '');
  if (input.stages.length === 0) {
    lines.push(run.status === 'queued' ? 'No stage has started yet.' : 'No stage has reported yet.');
  } else {
    lines.push('| stage | status | time | detail |', '|---|---|---|---|');
    for (const stage of input.stages) {
      lines.push(
        `| ${stage.name} | ${statusBadge(stage.status)} | ${isStarted(stage) ? formatDuration(stage.durationMs) : '–'} | ${stageDetail(stage)} |`,
      );
    }
  }
  lines.push(
    '',
    `The whole run and its logs: ${codeSpan(showCommand(input))} (an API token in \`FLUKSIO_TOKEN\`)`,
  );
  return lines.join('\n');
}

/** Why a run's stamp is dirty: uncommitted changes, or code that changed while its stages ran. */
function dirtyNote(run: CheckRunInput['run']): string {
  if (!run.dirty) return '';
  if (run.dirtyReasons.length === 0) return ' **dirty** (uncommitted changes)';
  return ` **dirty**: ${run.dirtyReasons.map((reason) => codeSpan(reason)).join('; ')}`;
}

function stampLines({ run, runner }: CheckRunInput): string[] {
  const params = formatParams(run.params);
  const claimedBy = runner ?? run.runnerName;
  const lines = [
    `- **run** \`${run.id}\`${run.attempt > 1 ? ` (attempt ${run.attempt})` : ''} · pipeline ${codeSpan(run.pipelinePath)}`,
    `- **commit** ${run.commit ? `\`${run.commit}\`` : '(none)'}${dirtyNote(run)}`,
    `- **code digest** ${run.codeDigest ? `\`${short(run.codeDigest, 16)}\`` : 'computed when the run starts'}`,
    `- **params** ${params ? codeSpan(params) : '(none)'} · digest \`${short(run.paramsDigest, 12)}\``,
    `- **runner** ${claimedBy ? codeSpan(claimedBy) : 'not claimed yet'}`,
  ];
  // Whether a fork's code could reach the runner's secrets is part of what the check run vouches for.
  if (run.startedAt) {
    lines.push(
      `- **sandbox** ${run.sandbox ? escapeMarkdown(run.sandbox) : "none: the stages ran as the runner's user, unsandboxed"}`,
    );
  }
  if (run.status === 'queued') lines.push(`- **queued since** ${run.queuedAt.toISOString()}`);
  else if (run.status === 'running' && run.startedAt)
    lines.push(`- **started** ${run.startedAt.toISOString()}`);
  else lines.push(`- **duration** ${formatDuration(run.durationMs)}`);
  return lines;
}

function failureLines(input: CheckRunInput): string[] {
  const { stages, tracebacks } = input;
  const lines: string[] = [];
  for (const stage of stages.filter((each) => each.status === 'failed' || each.status === 'timed_out')) {
    const verb = stage.status === 'failed' ? 'failed' : 'timed out';
    lines.push(
      `### ❌ Stage ${stage.name} ${verb}${stage.error ? `: ${escapeMarkdown(stage.error)}` : ''}`,
      '',
    );
    for (const traceback of tracebacks.filter((each) => each.stage === stage.name)) {
      const tail = tailOf(traceback.text, TRACEBACK_LINES);
      lines.push(`Traceback${tail.cut ? ` (last ${TRACEBACK_LINES} lines; ${tail.cut})` : ''}:`, '');
      lines.push(codeBlock(tail.text), '');
    }
    const tail = tailOf(stage.logTail, TAIL_LINES);
    if (tail.text) {
      lines.push(
        `Last lines of its output${tail.cut ? ` (${tail.cut})` : ''}; the whole log: ${codeSpan(`${showCommand(input)} --log ${stage.name}`)}`,
        '',
        codeBlock(tail.text),
        '',
      );
    }
  }
  return lines;
}

function metricLines({ run, metrics, baseline, series, goals }: CheckRunInput): string[] {
  const rows = diffMetrics(metrics, baseline?.run.metrics ?? null, goals);
  const lines = ['### Metrics', ''];
  lines.push(
    baseline
      ? `Against ${escapeMarkdown(baseline.label)}, run \`${baseline.run.id}\`.`
      : 'No baseline: no earlier successful run of this pipeline was found on the base commit or its ancestors, so there is nothing to compare with.',
    '',
  );
  const active = run.status === 'queued' || run.status === 'running';
  if (active && Object.keys(metrics).length === 0) return [...lines, 'No metrics yet.'];
  if (rows.length === 0) return [...lines, 'No metrics reported.'];
  lines.push('| metric | baseline | this run | Δ | Δ% | | series |', '|---|--:|--:|--:|--:|---|---|');
  for (const row of rows) {
    const points = series[row.name]?.points.map((point) => point.value) ?? [];
    const pct = row.deltaPct === null ? '–' : formatSigned(Number(row.deltaPct.toFixed(2)), '%');
    lines.push(
      `| ${escapeMarkdown(row.name)} | ${formatNumber(row.baseline)} | **${formatNumber(row.value)}** | ${formatSigned(row.delta)} | ${pct} | ${mark(row.better).trim()} | ${sparkline(points)} |`,
    );
  }
  return lines;
}

function textOf({ run, stages, annotations, tracebacks }: CheckRunInput): string {
  const lines = ['## Stages', ''];
  if (stages.length === 0) lines.push('No stage has reported yet.', '');
  for (const stage of stages) {
    lines.push(`### ${stage.name}: ${statusBadge(stage.status)}`, '');
    if (isStarted(stage)) lines.push(`- time ${formatDuration(stage.durationMs)}`);
    if (stage.cachedFrom) lines.push(`- restored from run \`${stage.cachedFrom}\``);
    if (stage.cacheKey) lines.push(`- cache key \`${stage.cacheKey}\``);
    if (stage.exitCode !== null) lines.push(`- exit code ${stage.exitCode}`);
    if (stage.error) lines.push(`- ${escapeMarkdown(stage.error)}`);
    if (stage.reasons.length > 0) {
      lines.push('- why it ran:');
      for (const reason of stage.reasons) lines.push(`  - ${escapeMarkdown(reason)}`);
    }
    for (const note of stage.notes) lines.push(`- ${escapeMarkdown(note)}`);
    lines.push('');
  }
  lines.push(`## Annotations (${annotations.length})`, '');
  if (annotations.length === 0) lines.push('None.');
  else lines.push(codeBlock(annotations.map(describeAnnotation).join('\n')));
  for (const traceback of tracebacks) {
    lines.push('', `## Traceback of ${traceback.stage}`, '', codeBlock(traceback.text));
  }
  lines.push(
    '',
    `Run \`${run.id}\` · params digest \`${run.paramsDigest}\` · env digest \`${run.envDigest ?? '–'}\``,
  );
  return lines.join('\n');
}

function describeAnnotation(note: Annotation): string {
  const where = note.path ? `${note.path}:${note.line ?? 1}` : '(no file)';
  const title = note.title ? ` ${note.title}:` : '';
  return `${where} ${note.level} [stage ${note.stage}]${title} ${note.message.replace(/\r?\n/g, '\n    ')}`;
}

/**
 * An annotation as GitHub takes it, or null when it is not on a repository file (no path,
 * or a path leaving the repository): those are listed in the text only.
 */
function toGitHubAnnotation(note: Annotation): GitHubAnnotation | null {
  const path = repositoryPath(note.path);
  if (path === null) return null;
  const line = note.line ?? 1;
  return {
    path,
    start_line: line,
    end_line: line,
    annotation_level: note.level === 'error' ? 'failure' : note.level,
    message: clipBytes(note.message || `${note.level} in stage ${note.stage}`, GITHUB_LIMITS.annotationBytes),
    title: clip(note.title ?? `stage ${note.stage}`, GITHUB_LIMITS.annotationTitle),
  };
}

/** `./src/x.py` → `src/x.py`; null for absolute paths, `..` escapes and empty paths. */
function repositoryPath(path: string | null): string | null {
  if (!path) return null;
  const normal = path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
  if (normal === '' || normal.startsWith('/') || /^[A-Za-z]:/.test(normal)) return null;
  if (normal.split('/').some((part) => part === '..')) return null;
  return normal;
}

function isStarted(stage: StageRecord): boolean {
  return stage.status !== 'pending' && stage.status !== 'skipped';
}

function statusBadge(status: StageStatus): string {
  const badges: Record<StageStatus, string> = {
    pending: '⏳ pending',
    running: '▶️ running',
    ran: '✅ ran',
    cached: '♻️ cached',
    failed: '❌ failed',
    timed_out: '⏱️ timed out',
    skipped: '⏭️ skipped',
    cancelled: '🚫 cancelled',
  };
  return badges[status];
}

/** The table cell saying where a cached stage came from, why a stage ran, or why it failed. */
function stageDetail(stage: StageRecord): string {
  if (stage.status === 'cached')
    return stage.cachedFrom ? `from run \`${stage.cachedFrom}\`` : 'from the cache';
  if (stage.error && stage.status !== 'ran') return escapeMarkdown(clip(oneLine(stage.error), CELL_CHARS));
  const reasons = stage.reasons.join('; ');
  if (reasons.length <= CELL_CHARS) return escapeMarkdown(reasons);
  return `${escapeMarkdown(clip(reasons, CELL_CHARS))} (all ${stage.reasons.length} reasons in the details)`;
}

function mark(better: boolean | null): string {
  return better === null ? '' : better ? ' ✅' : ' ❌';
}

/** The last `maxLines` lines of a log, long lines cut, and a phrase saying what was cut. */
function tailOf(log: string, maxLines: number): { text: string; cut: string } {
  const all = log.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const kept = all.slice(-maxLines);
  let cutLong = 0;
  const lines = kept.map((line) => {
    if (line.length <= LINE_CHARS) return line;
    cutLong += 1;
    return `${line.slice(0, LINE_CHARS)} … (${(line.length - LINE_CHARS).toLocaleString('en-US')} characters cut)`;
  });
  const cuts = [
    all.length > kept.length ? `${(all.length - kept.length).toLocaleString('en-US')} earlier lines cut` : '',
    cutLong ? `${cutLong} long ${cutLong === 1 ? 'line' : 'lines'} shortened` : '',
  ].filter(Boolean);
  return { text: lines.join('\n').trim() === '' ? '' : lines.join('\n'), cut: cuts.join(', ') };
}
