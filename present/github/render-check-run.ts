import { checkRunConclusion } from '../../schemas/check-run-conclusion.js';
import { formatDuration, formatNumber, formatSigned } from '../../schemas/format.js';
import type { RunView } from '../run-view.js';
import { checkRunSummary, checkRunText, wholeRunPointer } from './check-run-output.js';
import { githubAnnotations, type GitHubAnnotation } from './github-annotation.js';
import { GITHUB_LIMITS } from './github-limits.js';
import { betterMark } from './metric-table.js';
import { clip, fitMarkdown, oneLine } from './markdown.js';

/** A button on a completed check run; GitHub sends `check_run.requested_action` with its identifier. */
export interface CheckRunAction {
  label: string;
  description: string;
  identifier: string;
}

/** Everything a check-run create or update carries, ready to send (annotationPages pages the annotations). */
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

/**
 * A run as a GitHub check run (DESIGN §6, §8), the same from the app and from the action:
 * status and conclusion from the run state; a title; a summary with the stamp (or the
 * waiting reason), the failure's traceback and log tails, the metric diff against the
 * baseline with sparklines, and the stages with ran/cached and why; a text with every
 * stage's reasons and every annotation; the annotations on repository files; `actions`
 * (buttons only the app can answer) once completed. Every GitHub limit is respected with
 * visible truncation pointing at where the whole run is.
 */
export function renderCheckRun(
  view: RunView,
  { name, actions = [] }: { name: string; actions?: readonly CheckRunAction[] },
): RenderedCheckRun {
  const pointer = wholeRunPointer(view);
  const completed = view.status !== 'queued' && view.status !== 'running';
  return {
    name,
    status: view.status === 'queued' ? 'queued' : view.status === 'running' ? 'in_progress' : 'completed',
    conclusion: checkRunConclusion(view.status),
    title: clip(checkRunTitle(view), GITHUB_LIMITS.title),
    summary: fitMarkdown(checkRunSummary(view), GITHUB_LIMITS.summaryBytes, pointer),
    text: fitMarkdown(checkRunText(view), GITHUB_LIMITS.textBytes, pointer),
    annotations: githubAnnotations(view.annotations),
    actions: completed ? [...actions] : [],
  };
}

/** What a check run says at a glance: `Succeeded in 4m 05s · accuracy 0.9 (+0.05 ✅)`. */
export function checkRunTitle({ status, reason, stages, metricDiff, times }: RunView): string {
  const because = reason ? `: ${oneLine(reason)}` : '';
  switch (status) {
    case 'queued':
      return `Queued: ${oneLine(reason ?? 'waiting for a runner')}`;
    case 'running': {
      const done = stages.filter((stage) => stage.status === 'ran' || stage.status === 'cached').length;
      const active = stages.filter((stage) => stage.status === 'running').map((stage) => stage.name);
      return `Running${active.length ? ` ${active.join(', ')}` : ''} (${done} of ${stages.length} stages done)`;
    }
    case 'succeeded': {
      const headline = metricDiff.rows
        .filter((row) => metricDiff.goals[row.name] && row.value !== null)
        .map(
          (row) =>
            `${row.name} ${formatNumber(row.value)}${row.delta === null ? '' : ` (${formatSigned(row.delta)}${betterMark(row.better)})`}`,
        );
      return `Succeeded in ${formatDuration(times.durationMs)}${headline.length ? ` · ${headline.join(', ')}` : ''}`;
    }
    case 'failed': {
      const failed = stages.find((stage) => stage.status === 'failed' || stage.status === 'timed_out');
      const why = reason ?? (failed ? `stage ${failed.name}: ${failed.error ?? 'failed'}` : '');
      return `Failed${why ? `: ${oneLine(why)}` : ''}`;
    }
    case 'cancelled':
      return `Cancelled${because}`;
    case 'timed_out':
      return `Timed out${because}`;
    case 'abandoned':
      return `Abandoned${because || ': its runner stopped responding and no retries are left'}`;
  }
}
