import { describeParams } from '../../../core/params/describe-params.js';
import type { ParamValue } from '../../../schemas/key-inputs.js';
import type { ParamSpec } from '../../../schemas/pipeline.js';
import { MAX_GRID } from '../../../core/params/resolve-params.js';
import { formatParams } from '../../../core/text/format.js';
import { codeBlock, codeSpan } from '../../../present/github/markdown.js';

type PipelineParams = Readonly<Record<string, ParamSpec>> | null;

/** The grammar of DESIGN §4, as the help reply and every rejection show it. */
const GRAMMAR = [
  '/fluksio run [key=value ...] [--no-cache] [--sha <prefix>]   run the PR head',
  "/fluksio cancel [run-id]                                     cancel this PR's active runs (or one of them)",
  '/fluksio help                                                reply with the commands and the params',
].join('\n');

const GRAMMAR_NOTES = `Write the command on the first line of a comment. Values may be quoted (\`note="two words"\`); \`key=a,b,c\` is a sweep: every combination runs, at most ${MAX_GRID} runs. \`--no-cache\` executes every stage instead of restoring it. \`--sha <prefix>\` runs only if the pull request's head is that commit; on a pull request from a fork it is required, with the whole SHA.`;

/** The reply to `/fluksio help`: the commands, then the params this pipeline declares. */
export function renderHelpReply(pipelineParams: PipelineParams): string {
  return [
    '**fluksio** commands:',
    '',
    codeBlock(GRAMMAR),
    '',
    GRAMMAR_NOTES,
    '',
    paramsSection(pipelineParams),
  ].join('\n');
}

/**
 * The reply to a command that made no run: exactly what was wrong, one problem a line
 * (in a code block, so echoed text is shown as typed and mentions nobody), then what the
 * pipeline accepts.
 */
export function renderRejection(problems: string[], pipelineParams: PipelineParams): string {
  return [
    `😕 Nothing ran: ${problems.length === 1 ? 'the command has a problem' : `the command has ${problems.length} problems`}.`,
    '',
    codeBlock(problems.join('\n')),
    '',
    paramsSection(pipelineParams),
    '',
    'The commands:',
    '',
    codeBlock(GRAMMAR),
  ].join('\n');
}

/** The reply to `--sha` naming a commit that is no longer the pull request's head (DESIGN §5). */
export function renderShaRefused({ given, currentHead }: { given: string; currentHead: string }): string {
  return [
    `😕 Nothing ran: ${codeSpan(`--sha ${given}`)} is not the head of this pull request, which is now \`${currentHead}\`. It has moved since that commit; review the new commits, then run the current head with:`,
    '',
    codeBlock(`/fluksio run --sha ${currentHead}`),
    '',
    'Add any parameters to that line as before.',
  ].join('\n');
}

/**
 * The reply to `/fluksio run` on a fork's pull request without `--sha`, or with only a
 * prefix of it (DESIGN §5, §8).
 */
export function renderApprovalNeeded({
  headSha,
  given = null,
  bot = null,
}: {
  headSha: string;
  given?: string | null;
  /**
   * The bot whose code this is, and how: it opened the pull request (from a branch of the
   * repository), or pushed its head to a person's; null for a fork's pull request.
   */
  bot?: { login: string; did: 'opened' | 'pushed' } | null;
}): string {
  const source =
    bot === null
      ? 'this pull request comes from a fork'
      : bot.did === 'opened'
        ? `this pull request was opened by the bot ${codeSpan(bot.login)}`
        : `this pull request's head was pushed by the bot ${codeSpan(bot.login)}`;
  const why =
    given === null
      ? `${source}, and ${bot === null ? "a fork's" : "a bot's"} code runs only at a commit a maintainer names, so that what runs is exactly what was reviewed.`
      : `${source}, and its approval must name the whole commit SHA, not a prefix like ${codeSpan(given)}: a prefix can be matched by another commit.`;
  return [
    `😕 Nothing ran: ${why} After reviewing it, comment:`,
    '',
    codeBlock(`/fluksio run --sha ${headSha}`),
    '',
    `Add any parameters to that line. A later push to ${bot === null ? 'the fork' : 'the pull request'} needs a new command naming its new head.`,
  ].join('\n');
}

/**
 * The reply once a command's runs are queued: each run, its check run and its params; then
 * what of a `dvc.yaml` cannot be honoured, each naming its stage (in a code block: stage
 * names and URLs are the repository's text).
 */
export function renderQueued({
  runs,
  notes = [],
}: {
  runs: { id: string; params: Record<string, ParamValue>; checkName: string }[];
  notes?: string[];
}): string {
  const lines = [
    runs.length === 1 ? '🚀 Queued 1 run:' : `🚀 Queued ${runs.length} runs:`,
    '',
    '| run | check | params |',
    '|---|---|---|',
  ];
  for (const run of runs) {
    const params = formatParams(run.params);
    lines.push(`| \`${run.id}\` | ${codeSpan(run.checkName)} | ${params ? codeSpan(params) : '(none)'} |`);
  }
  lines.push('', `Cancel with \`/fluksio cancel\` (all of them) or \`/fluksio cancel <run-id>\`.`);
  if (notes.length > 0) {
    lines.push('', '⚠️ Not honoured (the other stages run):', '', codeBlock(notes.join('\n')));
  }
  return lines.join('\n');
}

function paramsSection(specs: PipelineParams): string {
  if (specs === null) {
    return "The pipeline's params are not listed: no valid `fluksio.yml` (nor `dvc.yaml`) could be read at the head of this pull request.";
  }
  const described = describeParams(specs);
  if (described.length === 0) return 'This pipeline declares no params.';
  return ["This pipeline's params:", '', codeBlock(described.join('\n'))].join('\n');
}
