import type { MetricGoals } from '../../../schemas/metric-diff.js';
import type { Run } from '../../../schemas/tables/runs.js';
import { formatNumber, formatValue } from '../../../core/text/format.js';
import { clip, codeSpan, escapeMarkdown, fitMarkdown } from '../../../present/github/markdown.js';
import { runBadge } from '../../../present/github/status-badge.js';
import { compareSweep, sweepDelta } from '../../../present/sweep-comparison.js';

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
  /**
   * The sweep's baseline (DESIGN §7: the base branch's run, as the members' check runs find
   * it) and how it is named (`main @ 1a2b3c4 (merge-base)`); null when there is none.
   */
  baseline?: { run: Run; label: string } | null;
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
 * A sweep's comparison comment: the marker, then the baseline's row and one row per grid
 * point — the params that vary, the status, each metric with its change against the
 * baseline — with the best value of each metric with a goal among succeeded runs marked
 * (present/sweep-comparison.ts, as the terminal's sweep table), bounded to GitHub's
 * comment limit.
 */
export function renderGroupComment({
  groupId,
  runs,
  goals,
  baseline = null,
  sweepUrl = null,
}: GroupCommentInput): string {
  const ordered = [...runs].sort(
    (a, b) =>
      (a.run.groupIndex ?? Infinity) - (b.run.groupIndex ?? Infinity) || (a.run.id < b.run.id ? -1 : 1),
  );
  const { varying, metrics, rows } = compareSweep({
    members: ordered.map(({ run, metrics: values }) => ({
      id: run.id,
      status: run.status,
      params: run.params,
      metrics: values,
      baselineMetrics: baseline?.run.metrics ?? null,
    })),
    goals,
  });
  const finished = rows.filter(
    ({ member }) => member.status !== 'queued' && member.status !== 'running',
  ).length;
  const header = [
    ...varying.map(escapeMarkdown),
    'status',
    // A metric's name is whatever a stage printed (a fork's code, once approved). This
    // comment is the App's and GitHub notifies whoever it mentions and links whatever looks
    // like a URL or a reference, so the name is shown in a code span, as typed, doing none of that.
    ...metrics.map((name) => `${codeSpan(name)}${goalNote(goals, name)}`),
    'run',
  ];
  const align = [...varying.map(() => '---'), '---', ...metrics.map(() => '--:'), '---'];
  const paramCells = (params: Run['params']) =>
    varying.map((key) => {
      const value = params[key];
      return value === undefined ? '–' : codeSpan(clip(formatValue(value), VALUE_CHARS));
    });
  const lines = [
    groupMarker(groupId),
    `### fluksio sweep: ${finished} of ${rows.length} runs finished`,
    '',
    ...(sweepUrl ? [`[Compare the runs on the sweep's page](${sweepUrl})`, ''] : []),
    baseline
      ? `Each run against the sweep's baseline, ${escapeMarkdown(baseline.label)}, run \`${baseline.run.id}\` (Δ% in brackets).`
      : "No baseline: no clean successful run of this pipeline at the base branch's merge-base or its first-parent ancestors, so nothing is compared.",
    '',
    `| ${header.join(' | ')} |`,
    `|${align.join('|')}|`,
  ];
  if (baseline) {
    const cells = [
      ...paramCells(baseline.run.params),
      '📏 **baseline**',
      ...metrics.map((name) => formatNumber(baseline.run.metrics[name])),
      `\`${baseline.run.id}\``,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  for (const { member, diff, best } of rows) {
    const cells = [...paramCells(member.params), runBadge(member.status)];
    for (const name of metrics) {
      const value = formatNumber(member.metrics[name]);
      const delta = sweepDelta(diff.get(name));
      cells.push(`${best.has(name) ? `**${value}** 🏆` : value}${delta ? ` ${delta}` : ''}`);
    }
    cells.push(`\`${member.id}\``);
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    Object.keys(goals).length > 0
      ? '🏆 marks the best value of each metric with a goal among the runs that succeeded. Each run has its own check run.'
      : 'The pipeline declares no metric goals, so no run is marked best. Each run has its own check run.',
    'Cancel with `/fluksio cancel` (all of them) or `/fluksio cancel <run-id>`.',
  );
  return fitMarkdown(lines.join('\n'), MAX_COMMENT_BODY, "each run's check run and `fluksio show <run>`");
}

/** ` (max)` or ` (min)` after a metric with a goal; nothing after one without. */
function goalNote(goals: MetricGoals, name: string): string {
  const goal = goals[name]?.goal;
  return goal ? ` (${goal})` : '';
}
