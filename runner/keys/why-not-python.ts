import { constants } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'shell-quote';
import { hasUnquotedBracketGlob } from './unquoted-bracket-glob.js';

/** Redirections of output only: the shell writes those files, it reads nothing the hook would miss. */
const HARMLESS_OPERATORS = new Set(['>', '>>', '>&', '>|']);

/**
 * A command substitution left inside a word: shell-quote reads `"$(…)"` and `` `…` `` as
 * plain text (it does not model them), though the shell runs them. Also matches a literal
 * `'$(…)'`, which only costs that command its tracing.
 */
const SUBSTITUTION = /\$\(|`/;

/** An interpreter's file name: `python`, `python3`, `python3.11`. */
export const PYTHON_NAME = /^python[0-9.]*$/;

export interface CommandContext {
  /** The directory the command runs in (a relative program path is resolved from it). */
  cwd: string;
  /** The stage's `PATH`. */
  path: string | undefined;
}

/**
 * Why a stage's command cannot be traced as a Python program, or null when it can: the
 * shell must start exactly one program, a Python interpreter, and read nothing itself.
 * Leading `NAME=value` assignments are allowed; a pipeline, a list (`;`, `&&`), input
 * redirection, a command substitution (quoted or not) or a glob the shell expands (`*`,
 * `?`, or a bracket expression shell-quote reads as text) is not, because the shell would start or read something no audit hook sees.
 */
export async function whyNotPython(cmd: string, context: CommandContext): Promise<string | null> {
  let tokens: ReturnType<typeof parse>;
  try {
    tokens = parse(cmd, (name) => `$${name}`);
  } catch {
    // shell-quote gives up on some expansions (`${X:-$(cmd)}`, an unclosed `${`): the shell does not.
    return 'the shell expands something fluksio cannot read';
  }
  const words: string[] = [];
  for (const token of tokens) {
    if (typeof token === 'string') {
      if (SUBSTITUTION.test(token)) return 'the shell runs a command substitution $(…) or `…`';
      words.push(token);
    } else if (!('op' in token))
      continue; // a comment: the shell ignores it
    else if (token.op === 'glob') return 'the shell expands a glob';
    else if (token.op === '(' || token.op === ')') return 'the shell runs a subshell or $(…)';
    else if (!HARMLESS_OPERATORS.has(token.op)) return `the shell runs it (${token.op})`;
  }
  if (hasUnquotedBracketGlob(cmd)) return 'the shell expands a glob';
  const program = words.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
  if (program === undefined) return 'it starts no program';
  if (program.includes('$')) return `its program ${program} is a shell expansion`;
  const found = await resolveProgram(program, context);
  if (found === null) return `${program} was not found`;
  const name = path.basename(await realpath(found).catch(() => found));
  return PYTHON_NAME.test(name) || PYTHON_NAME.test(path.basename(program))
    ? null
    : `${path.basename(program)} is not Python`;
}

async function resolveProgram(program: string, context: CommandContext): Promise<string | null> {
  const candidates = program.includes('/')
    ? [path.resolve(context.cwd, program)]
    : (context.path ?? '').split(':').map((dir) => path.join(dir || '.', program));
  for (const candidate of candidates) {
    const executable = await access(path.resolve(context.cwd, candidate), constants.X_OK).then(
      () => true,
      () => false,
    );
    if (executable) return path.resolve(context.cwd, candidate);
  }
  return null;
}
