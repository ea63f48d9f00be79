import { formatProblems, type Problem } from '../../../core/problem.js';
import { GITHUB_LIMITS } from '../../../present/github/github-limits.js';
import { clip, clipBytes, codeBlock, fitMarkdown } from '../../../present/github/markdown.js';
import type { RenderedCheckRun } from '../../../present/github/render-check-run.js';

/**
 * A check run that asks a human to act, with no run behind it (DESIGN §6, §8): a fork's
 * pull request, or a bot's push to one, waiting for a maintainer's approval, printing the exact command to copy,
 * or a broken pipeline file (`fluksio.yml`, or a DVC project's `dvc.yaml`), listing every
 * problem as `fluksio.yml:LINE: path: message` (and annotating the file where the line is
 * known).
 */
export function renderActionRequired(
  request:
    | {
        kind: 'approval';
        headSha: string;
        prNumber: number;
        /** The bot whose push waits (a pull request of the repository's own); none for a fork's. */
        pushedBy?: string;
      }
    | { kind: 'broken-pipeline'; problems: Problem[]; path: string; sha: string },
  checkName: string,
): RenderedCheckRun {
  const base = { name: checkName, status: 'completed' as const, conclusion: 'action_required' as const };
  if (request.kind === 'approval') {
    const command = `/fluksio run --sha ${request.headSha}`;
    const bot = request.pushedBy;
    return {
      ...base,
      title: bot
        ? `Approval needed: this commit was pushed by ${clip(bot, 100)}`
        : 'Approval needed: this pull request comes from a fork',
      summary: [
        bot
          ? `The head of pull request #${request.prNumber} was pushed by the bot ${bot}. A bot's commits never run automatically: their code (a dependency update's install scripts, say) would run on your runners with their secrets, so a maintainer with write access must review it and approve exactly the commit they reviewed.`
          : `Pull request #${request.prNumber} comes from a fork. Pull requests from forks never run automatically: their code would run on your runners, so a maintainer with write access must review it and approve exactly the commit they reviewed.`,
        '',
        `To run commit \`${request.headSha}\`, comment on the pull request:`,
        '',
        codeBlock(command),
        '',
        bot
          ? 'Parameters may be added (`/fluksio run --sha … lr=0.1`). A later push by the bot needs a new approval naming its new head.'
          : 'Parameters may be added (`/fluksio run --sha … lr=0.1`). A later push to the fork needs a new approval naming its new head.',
      ].join('\n'),
      text: `Only a comment carrying \`--sha ${request.headSha}\` runs this commit; \`/fluksio run\` without it, or with another commit, is refused.`,
      annotations: [],
      actions: [],
    };
  }
  const count = request.problems.length;
  return {
    ...base,
    title: clip(`${request.path} has ${count} ${count === 1 ? 'problem' : 'problems'}`, GITHUB_LIMITS.title),
    summary: fitMarkdown(
      [
        `Nothing ran: \`${request.path}\` at \`${request.sha}\` is not a valid pipeline. Fix these and push again:`,
        '',
        codeBlock(formatProblems(request.problems, request.path)),
      ].join('\n'),
      GITHUB_LIMITS.summaryBytes,
      `the output of \`fluksio run\` at this commit, which validates the same file`,
    ),
    text: `Every problem is listed in the summary; those whose line is known are also annotated on \`${request.path}\`.`,
    annotations: request.problems.flatMap((problem) =>
      problem.line === undefined
        ? []
        : [
            {
              path: request.path,
              start_line: problem.line,
              end_line: problem.line,
              annotation_level: 'failure' as const,
              message: clipBytes(
                problem.path ? `${problem.path}: ${problem.message}` : problem.message,
                GITHUB_LIMITS.annotationBytes,
              ),
              title: 'Invalid pipeline',
            },
          ],
    ),
    actions: [],
  };
}
