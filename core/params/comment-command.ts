import {
  assignmentsOf,
  tokenizeAssignmentText,
  type AssignmentToken,
  type ParamAssignment,
} from './param-assignments.js';
import type { Problem } from '../problem.js';

/**
 * Comments longer than this are refused unread: a command is one line, and parsing a
 * pasted log as parameters would only produce a wall of confusing problems.
 */
export const MAX_COMMENT_LENGTH = 10_000;

/** A PR comment command of DESIGN §4, or what was wrong with it. */
export type CommentCommand =
  | {
      kind: 'run';
      assignments: ParamAssignment[];
      noCache: boolean;
      /** The `--sha <prefix>` value as given (7–64 lowercase hex), or null. */
      sha: string | null;
    }
  | { kind: 'cancel'; runId: string | null }
  | { kind: 'help' }
  | { kind: 'invalid'; problems: Problem[] };

const PREFIX = '/fluksio';
const SHA_PREFIX = /^[0-9a-f]{7,64}$/;
/** A run id or a prefix of one: ULIDs are Crockford base32, 26 characters. */
const RUN_ID = /^[0-9A-Za-z]{1,26}$/;

/**
 * Reads the command of a PR comment (DESIGN §4): the first non-blank line that is not a
 * quote (`>`, or a line continuing one) nor indented code, when it starts with `/fluksio`
 * followed by a blank or the line's end (case-sensitive). Returns null for every other comment, so ordinary discussion is never
 * answered; a command that cannot be understood is `invalid` with every problem at once.
 * The rest of the comment (after the command line) is free text and ignored.
 */
export function parseCommentCommand(body: string): CommentCommand | null {
  const line = commandLine(body);
  if (line === null) return null;
  // Checked after finding the command line: a long review comment that is no command must
  // stay unanswered, but a long one that is gets told why nothing ran.
  if (body.length > MAX_COMMENT_LENGTH) {
    return invalid(
      `The comment is ${body.length.toLocaleString('en-US')} characters long; fluksio reads commands from comments of at most ${MAX_COMMENT_LENGTH.toLocaleString('en-US')} characters`,
    );
  }
  const rest = line.slice(PREFIX.length).trim();
  const [subcommand = '', ...tail] = rest.split(/\s+/);
  const args = rest.slice(subcommand.length).trim();
  switch (subcommand) {
    case 'run':
      return parseRun(args);
    case 'cancel':
      return parseCancel(tail.filter((token) => token !== ''));
    case 'help':
      // Anything after `help` is ignored: whatever was asked, the grammar is the answer.
      return { kind: 'help' };
    case '':
      return invalid('`/fluksio` needs a command: run, cancel or help (e.g. /fluksio run lr=0.1)');
    default:
      return invalid(`Unknown command '${subcommand}'; fluksio understands run, cancel and help`);
  }
}

/**
 * The first non-blank line outside a quote, if it is a `/fluksio` command; else null. A
 * line is read as GitHub renders it (CommonMark): one right after a quoted line of text
 * continues that quote (a lazy continuation), and one indented by four columns or more is
 * an indented code block — neither is someone's command, whatever it says.
 */
function commandLine(body: string): string | null {
  let continuesQuote = false;
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') {
      continuesQuote = false;
      continue;
    }
    if (line.startsWith('>')) {
      continuesQuote = line.slice(1).trim() !== '';
      continue;
    }
    if (continuesQuote || indentationOf(raw) >= 4) return null;
    if (!line.startsWith(PREFIX)) return null;
    const next = line.charAt(PREFIX.length);
    return next === '' || /\s/.test(next) ? line : null;
  }
  return null;
}

/** The columns of blank a line starts with, a tab reaching the next multiple of four. */
function indentationOf(raw: string): number {
  let columns = 0;
  for (const character of raw) {
    if (character === ' ') columns += 1;
    else if (character === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

function parseRun(args: string): CommentCommand {
  const problems: Problem[] = [];
  const paramTokens: AssignmentToken[] = [];
  let noCache = false;
  let sha: string | null = null;
  let shaSeen = false;
  const { tokens, problems: quoting } = tokenizeAssignmentText(args);
  if (quoting.length > 0) return { kind: 'invalid', problems: quoting };
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] as AssignmentToken;
    // A `--flag` inside quotes stays part of a value.
    if (!token.written.startsWith('--')) {
      paramTokens.push(token);
      continue;
    }
    const [flag = '', inline] = splitFlag(token.written);
    if (flag === '--no-cache') {
      if (inline !== undefined) problems.push(problem(`--no-cache takes no value (got "${token.written}")`));
      noCache = true;
    } else if (flag === '--sha') {
      let value = inline;
      if (value === undefined) {
        const next = tokens[index + 1]?.written;
        if (next !== undefined && !next.startsWith('--')) {
          value = next;
          index += 1;
        }
      }
      if (shaSeen) problems.push(problem('--sha is given twice; give the one commit to run'));
      shaSeen = true;
      if (value === undefined || value === '') {
        problems.push(problem('--sha needs a commit SHA prefix (e.g. --sha 1a2b3c4)'));
      } else if (!SHA_PREFIX.test(value)) {
        problems.push(
          problem(
            `--sha ${JSON.stringify(value)} is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)`,
          ),
        );
      } else {
        sha = value;
      }
    } else {
      problems.push(
        problem(`Unknown option '${flag}' for /fluksio run; it accepts --no-cache and --sha <prefix>`),
      );
    }
  }
  const parsed = assignmentsOf(paramTokens);
  problems.push(...parsed.problems);
  if (problems.length > 0) return { kind: 'invalid', problems };
  return { kind: 'run', assignments: parsed.assignments, noCache, sha };
}

function parseCancel(args: string[]): CommentCommand {
  if (args.length === 0) return { kind: 'cancel', runId: null };
  if (args.length > 1) {
    return invalid(`/fluksio cancel takes at most one run id (got ${args.length}: ${args.join(' ')})`);
  }
  const runId = args[0] as string;
  if (!RUN_ID.test(runId)) {
    return invalid(
      `/fluksio cancel: ${JSON.stringify(runId)} is not a run id (letters and digits, e.g. 01J9ZQ4K8M)`,
    );
  }
  return { kind: 'cancel', runId };
}

/** `--sha=abc` → ['--sha', 'abc']; `--sha` → ['--sha', undefined]. */
function splitFlag(token: string): [string, string | undefined] {
  const equals = token.indexOf('=');
  return equals < 0 ? [token, undefined] : [token.slice(0, equals), token.slice(equals + 1)];
}

function problem(message: string): Problem {
  return { path: '', message };
}

function invalid(message: string): CommentCommand {
  return { kind: 'invalid', problems: [problem(message)] };
}
