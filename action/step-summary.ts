import type { RunView } from '../present/run-view.js';
import { escapeMarkdown } from '../present/github/markdown.js';
import type { RenderedCheckRun } from '../present/github/render-check-run.js';
import { runBadge } from '../present/github/status-badge.js';
import { formatNumber, formatParams, short } from '../schemas/format.js';

/**
 * A run in the step summary: what its check run says (title, summary), then its text
 * (every stage's reasons, the annotations, the tracebacks) folded away. The step summary
 * is the check run where the token may not create one.
 */
export function runStepSummary(rendered: RenderedCheckRun, view: RunView): string {
  const params = formatParams(view.stamp.params);
  return [
    `### ${escapeMarkdown(rendered.name)}: ${runBadge(view.status)}${params ? ` · ${escapeMarkdown(params)}` : ''}`,
    '',
    `**${escapeMarkdown(rendered.title)}**`,
    '',
    rendered.summary,
    '',
    '<details><summary>Every stage, annotation and traceback</summary>',
    '',
    rendered.text,
    '',
    '</details>',
    '',
  ].join('\n');
}

/** One row per run of a sweep, above each run's own summary. */
export function sweepStepSummary(
  groupId: string,
  views: readonly RunView[],
  runSummaries: readonly string[],
): string {
  const succeeded = views.filter((view) => view.status === 'succeeded').length;
  const metricNames = [...new Set(views.flatMap((view) => Object.keys(view.metrics)))].slice(0, 6);
  const lines = [
    `## fluksio sweep \`${groupId}\`: ${succeeded} of ${views.length} succeeded`,
    '',
    `| run | params | status |${metricNames.map((name) => ` ${escapeMarkdown(name)} |`).join('')}`,
    `|---|---|---|${metricNames.map(() => '---:|').join('')}`,
    ...views.map(
      (view) =>
        `| \`${short(view.id, 10)}\` | ${escapeMarkdown(formatParams(view.stamp.params))} | ${runBadge(view.status)} |${metricNames.map((name) => ` ${formatNumber(view.metrics[name])} |`).join('')}`,
    ),
  ];
  return `${lines.join('\n')}\n\n${runSummaries.join('\n')}`;
}
