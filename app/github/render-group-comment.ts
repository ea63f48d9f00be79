import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { Run } from '../../schemas/tables/runs.js';
import { formatNumber, formatValue } from '../../schemas/format.js';
import { clip, codeSpan, escapeMarkdown, fitMarkdown } from '../../present/github/markdown.js';
import { runBadge } from '../../present/github/status-badge.js';

/** GitHub's limit on an issue comment's body. */
export const MAX_COMMENT_BODY = 65_536;

/** Group ids are ULIDs; the marker accepts only characters that cannot end an HTML comment. */
const GROUP_ID = /^[0-9A-Za-z_-]+$/;
const MARKER = /^\s*<!-- fluksio:group:([0-9A-Za-z_-]+) -->/;
/** A swept value longer than this is cut in its cell; the run's check run has it whole. */
const VALUE_CHARS = 100;

export interface GroupCommentInput {
  groupId: string;
  runs: { run: Run; metrics: Record<string, number>; checkName: string }[];
  goals: MetricGoals;
  /** The swept keys, in the order given. */
  swept: string[];
  /** The sweep's page (a signed link), linked under the heading; null without one. */
  sweepUrl?: string | null;
}

/**
 * The hidden first line of a sweep's comparison comment, by which the comment is found
 * again to be edited in place (DESIGN §8). Throws for an id that is no ULID-like token:
 * group ids are made by fluksio, so that is a bug, not input.
 */
export function groupMarker(groupId: string): string {
  if (!GROUP_ID.test(groupId))
    throw new Error(`Group id ${JSON.stringify(groupId)} cannot be put in a marker`);
  return `<!-- fluksio:group:${groupId} -->`;
}

/** The group id of a comment that starts with a group marker, else null. */
export function findGroupMarker(body: string): string | null {
  return MARKER.exec(body)?.[1] ?? null;
}

/**
 * A sweep's comparison comment: the marker, then one row per grid point (its swept params,
 * its status, each goal metric) with the best value of each metric among succeeded runs
 * marked, bounded to GitHub's comment limit.
 */
export function renderGroupComment({
  groupId,
  runs,
  goals,
  swept,
  sweepUrl = null,
}: GroupCommentInput): string {
  const metrics = Object.keys(goals);
  const rows = [...runs].sort(
    (a, b) =>
      (a.run.groupIndex ?? Infinity) - (b.run.groupIndex ?? Infinity) || (a.run.id < b.run.id ? -1 : 1),
  );
  const best = new Map(metrics.map((name) => [name, bestValue(name, goals[name]?.goal ?? 'max', rows)]));
  const finished = rows.filter(({ run }) => run.status !== 'queued' && run.status !== 'running').length;
  const header = [
    ...swept.map(escapeMarkdown),
    'status',
    ...metrics.map((name) => `${escapeMarkdown(name)} ${arrow(goals, name)}`),
    'run',
  ];
  const align = [...swept.map(() => '---'), '---', ...metrics.map(() => '--:'), '---'];
  const lines = [
    groupMarker(groupId),
    `### fluksio sweep: ${finished} of ${rows.length} runs finished`,
    '',
    ...(sweepUrl ? [`[Compare the runs on the sweep's page](${sweepUrl})`, ''] : []),
    `| ${header.join(' | ')} |`,
    `|${align.join('|')}|`,
  ];
  for (const { run, metrics: values } of rows) {
    const cells = swept.map((key) => {
      const value = run.params[key];
      return value === undefined ? '–' : codeSpan(clip(formatValue(value), VALUE_CHARS));
    });
    cells.push(runBadge(run.status));
    for (const name of metrics) {
      const value = values[name];
      const isBest = run.status === 'succeeded' && value !== undefined && value === best.get(name);
      cells.push(isBest ? `**${formatNumber(value)}** 🏆` : formatNumber(value));
    }
    cells.push(`\`${run.id}\``);
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    metrics.length > 0
      ? '🏆 marks the best value of each metric among the runs that succeeded. Each run has its own check run.'
      : 'The pipeline declares no metric goals, so no metric is compared. Each run has its own check run.',
    'Cancel with `/fluksio cancel` (all of them) or `/fluksio cancel <run-id>`.',
  );
  return fitMarkdown(lines.join('\n'), MAX_COMMENT_BODY, "each run's check run and `fluksio show <run>`");
}

function bestValue(name: string, goal: 'min' | 'max', rows: GroupCommentInput['runs']): number | undefined {
  const values = rows
    .filter(({ run }) => run.status === 'succeeded')
    .map(({ metrics }) => metrics[name])
    .filter((value): value is number => value !== undefined && Number.isFinite(value));
  if (values.length === 0) return undefined;
  return goal === 'min' ? Math.min(...values) : Math.max(...values);
}

function arrow(goals: MetricGoals, name: string): string {
  return goals[name]?.goal === 'min' ? '(min)' : '(max)';
}
