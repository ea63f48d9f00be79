import { formatDuration, formatParams, short } from '../../core/text/format.js';
import { describeJobPending } from '../../core/text/describe-job-pending.js';
import { describeStageUsage, formatCompute } from '../../core/text/format-compute.js';
import type { Annotation } from '../../schemas/annotation.js';
import type { RunView, StageView } from '../run-view.js';
import { logTail } from './log-tail.js';
import { codeBlock, codeSpan, clip, escapeMarkdown, oneLine } from './markdown.js';
import { metricLines } from './metric-table.js';
import { stageBadge } from './status-badge.js';

/** Lines of a failing stage's output and of a traceback shown in the summary. */
const TAIL_LINES = 25;
const TRACEBACK_LINES = 40;
/** Reasons of one stage shown in the stages table; all of them are in the text. */
const CELL_CHARS = 300;

/**
 * The summary of a run's check run (and of the action's step summary): why it waits or
 * stopped, the stamp, each failed stage's traceback and log tail, the metric diff, the
 * stages with ran/cached and why, and where the whole run is. Not yet cut to GitHub's
 * limit (renderCheckRun does that).
 */
export function checkRunSummary(view: RunView): string {
  const lines: string[] = [];
  const hasFailedStage = view.stages.some(isFailed);
  if (view.status === 'queued') {
    lines.push(`⏳ **${escapeMarkdown(view.reason ?? 'Waiting for a runner')}**`, '');
  } else if (view.reason && view.status !== 'succeeded' && view.status !== 'running' && !hasFailedStage) {
    // A failed stage's own section below says why; this line is for cancels, timeouts and lost runners.
    lines.push(`**${escapeMarkdown(view.reason)}**`, '');
  }
  lines.push(...stampLines(view), '');
  lines.push(...failureLines(view));
  lines.push(...metricLines(view), '');
  const chart = view.links.chart;
  if (chart) lines.push(`![${escapeMarkdown(chart.metric)} curves](${chart.url})`, '');
  lines.push('### Stages', '');
  if (view.stages.length === 0) {
    lines.push(view.status === 'queued' ? 'No stage has started yet.' : 'No stage has reported yet.');
  } else {
    lines.push('| stage | status | time | detail |', '|---|---|---|---|');
    for (const stage of view.stages) {
      lines.push(
        `| ${stage.name} | ${stageBadge(stage.status)} | ${stage.durationMs === null ? '–' : formatDuration(stage.durationMs)} | ${stageCell(stage)} |`,
      );
    }
  }
  const whole = wholeRunLine(view);
  if (whole) lines.push('', whole);
  return lines.join('\n');
}

/** The text of a run's check run: every stage's reasons, every annotation, every traceback. */
export function checkRunText({ id, stamp, stages, annotations }: RunView): string {
  const lines = ['## Stages', ''];
  if (stages.length === 0) lines.push('No stage has reported yet.', '');
  for (const stage of stages) {
    lines.push(`### ${stage.name}: ${stageBadge(stage.status)}`, '');
    if (stage.durationMs !== null) lines.push(`- time ${formatDuration(stage.durationMs)}`);
    if (stage.cachedFrom) lines.push(`- restored from run \`${stage.cachedFrom}\``);
    if (stage.cacheKey) lines.push(`- cache key \`${stage.cacheKey}\``);
    if (stage.exitCode !== null) lines.push(`- exit code ${stage.exitCode}`);
    if (stage.pending) lines.push(`- ${escapeMarkdown(describeJobPending(stage.pending))}`);
    if (stage.usage) lines.push(`- ${escapeMarkdown(describeStageUsage(stage.usage))}`);
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
  for (const stage of stages) {
    for (const traceback of stage.tracebacks) {
      lines.push('', `## Traceback of ${stage.name}`, '', codeBlock(traceback));
    }
  }
  lines.push(
    '',
    `Run \`${id}\` · params digest \`${stamp.paramsDigest}\` · env digest \`${stamp.envDigest ?? '–'}\``,
  );
  return lines.join('\n');
}

/** Where the whole run is, as a truncation notice names it: the command, else the page. */
export function wholeRunPointer({ links }: RunView): string {
  if (links.showCommand) return codeSpan(links.showCommand);
  if (links.detailsUrl) return `[${escapeMarkdown(links.detailsLabel)}](${links.detailsUrl})`;
  return escapeMarkdown(links.detailsLabel);
}

function wholeRunLine(view: RunView): string | null {
  if (view.links.showCommand) {
    return `The whole run and its logs: ${codeSpan(view.links.showCommand)} (an API token in \`FLUKSIO_TOKEN\`)`;
  }
  if (view.links.detailsUrl) return `The whole run and its logs: ${wholeRunPointer(view)}`;
  return null;
}

/** Why a run's stamp is dirty: uncommitted changes, or code that changed while its stages ran. */
function dirtyNote({ dirty, dirtyReasons }: RunView['stamp']): string {
  if (!dirty) return '';
  if (dirtyReasons.length === 0) return ' **dirty** (uncommitted changes)';
  return ` **dirty**: ${dirtyReasons.map((reason) => codeSpan(reason)).join('; ')}`;
}

function stampLines(view: RunView): string[] {
  const { stamp, placement, times } = view;
  const params = formatParams(stamp.params);
  const lines = [
    `- **run** \`${view.id}\`${view.attempt > 1 ? ` (attempt ${view.attempt})` : ''} · pipeline ${codeSpan(view.pipelinePath)}`,
    `- **commit** ${stamp.commit ? `\`${stamp.commit}\`` : '(none)'}${dirtyNote(stamp)}${stamp.commitNote ? ` — ${escapeMarkdown(stamp.commitNote)}` : ''}`,
    `- **code digest** ${stamp.codeDigest ? `\`${short(stamp.codeDigest, 16)}\`` : 'computed when the run starts'}`,
    `- **params** ${params ? codeSpan(params) : '(none)'} · digest \`${short(stamp.paramsDigest, 12)}\``,
  ];
  if (placement) {
    lines.push(`- **runner** ${placement.runner ? codeSpan(placement.runner) : 'not claimed yet'}`);
    // Whether a fork's code could reach the runner's secrets is part of what the check run vouches for.
    if (times.startedAt) {
      lines.push(
        `- **sandbox** ${placement.sandbox ? escapeMarkdown(placement.sandbox) : "none: the stages ran as the runner's user, unsandboxed"}`,
      );
    }
  }
  // What a run (and so a sweep) cost is a question every team asks of a cluster.
  if (view.compute) lines.push(`- **compute** ${formatCompute(view.compute)} (Slurm jobs, every attempt)`);
  if (view.status === 'queued') {
    if (times.queuedAt) lines.push(`- **queued since** ${times.queuedAt}`);
  } else if (view.status === 'running' && times.startedAt) lines.push(`- **started** ${times.startedAt}`);
  else lines.push(`- **duration** ${formatDuration(times.durationMs)}`);
  return lines;
}

function failureLines(view: RunView): string[] {
  const lines: string[] = [];
  for (const stage of view.stages.filter(isFailed)) {
    const verb = stage.status === 'failed' ? 'failed' : 'timed out';
    lines.push(
      `### ❌ Stage ${stage.name} ${verb}${stage.error ? `: ${escapeMarkdown(stage.error)}` : ''}`,
      '',
    );
    for (const traceback of stage.tracebacks) {
      const tail = logTail(traceback, TRACEBACK_LINES);
      lines.push(`Traceback${tail.cut ? ` (last ${TRACEBACK_LINES} lines; ${tail.cut})` : ''}:`, '');
      lines.push(codeBlock(tail.text), '');
    }
    const tail = logTail(stage.logTail, TAIL_LINES);
    if (tail.text) {
      lines.push(
        `Last lines of its output${tail.cut ? ` (${tail.cut})` : ''}${wholeLogPointer(view, stage.name)}`,
        '',
        codeBlock(tail.text),
        '',
      );
    }
  }
  return lines;
}

/** `; the whole log: …` for a stage, or nothing when the run can be reached nowhere. */
function wholeLogPointer(view: RunView, stage: string): string {
  if (view.links.showCommand)
    return `; the whole log: ${codeSpan(`${view.links.showCommand} --log ${stage}`)}`;
  if (view.links.detailsUrl) return `; the whole log: ${wholeRunPointer(view)}`;
  return '';
}

function isFailed(stage: StageView): boolean {
  return stage.status === 'failed' || stage.status === 'timed_out';
}

function describeAnnotation(note: Annotation): string {
  const where = note.path ? `${note.path}:${note.line ?? 1}` : '(no file)';
  const title = note.title ? ` ${note.title}:` : '';
  return `${where} ${note.level} [stage ${note.stage}]${title} ${note.message.replace(/\r?\n/g, '\n    ')}`;
}

/**
 * The table cell saying where a cached stage came from, why a running stage's job waits,
 * why a stage ran, or why it failed.
 */
function stageCell(stage: StageView): string {
  if (stage.status === 'cached')
    return stage.cachedFrom ? `from run \`${stage.cachedFrom}\`` : 'from the cache';
  if (stage.error && stage.status !== 'ran') return escapeMarkdown(clip(oneLine(stage.error), CELL_CHARS));
  // Why a job waits is what a running stage's row is read for; why it ran is in the details.
  if (stage.pending) return `⏳ ${escapeMarkdown(describeJobPending(stage.pending))}`;
  const reasons = stage.reasons.join('; ');
  if (reasons.length <= CELL_CHARS) return escapeMarkdown(reasons);
  return `${escapeMarkdown(clip(reasons, CELL_CHARS))} (all ${stage.reasons.length} reasons in the details)`;
}
