import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'shell-quote';
import which from 'which';
import type { Interpreter } from '../../schemas/key-inputs.js';
import type { InterpreterDigests } from './interpreter-digests.js';
import type { LauncherProbe } from './launched-python.js';
import { PYTHON_NAME } from './why-not-python.js';

/** Operators after which the shell starts a new command. */
const COMMAND_SEPARATORS = new Set(['&&', '||', ';', ';;', '|', '|&', '&', '(', ')']);
/** Words that run the command after them (with their own options first): `env python3 x.py`. */
const WRAPPERS = new Set(['env', 'exec', 'command', 'nohup', 'time']);
/**
 * What `/bin/sh` runs itself, not from PATH (some also exist as files, like `/bin/echo`,
 * but the shell never starts those), and its keywords.
 */
const SHELL_OWN = new Set(
  (
    '. : [ alias bg break case cd continue do done echo elif else esac eval exit export false fg fi for ' +
    'getopts hash if in jobs kill local printf pwd read readonly return set shift source test then ' +
    'trap true type ulimit umask unalias unset until wait while { } !'
  ).split(' '),
);

export interface CommandInterpretersOptions {
  /** The stage's PATH. */
  path: string;
  /** Where the command runs: relative program paths (`./run.sh`) start here. */
  cwd: string;
  /** The repository's root: a program inside it is code, keyed by the code digest. */
  repoRoot: string;
  digests: InterpreterDigests;
  /**
   * Asks a Python launcher which interpreter it starts (makeLauncherProbe); without it, a
   * launcher is keyed by its own bytes only. @defaultValue none
   */
  probeLauncher?: LauncherProbe;
}

/** The key of what a Python launcher starts, beside the launcher's own: `python3 (what its launcher starts)`. */
export const LAUNCHED = ' (what its launcher starts)';

/**
 * The programs a stage's command line starts, as they enter its cache key (issue 8,
 * defect 5): the first word of each command in the line (after `VAR=value` assignments
 * and wrappers such as `env`), found on the stage's PATH as the shell would, with its real
 * path (symlinks followed) and the digest of its bytes — so another `python3` first on
 * PATH is another key. A script's `#!` line is followed one step (`#!/usr/bin/env
 * python3` keys the `python3` PATH finds). A word that is the shell's own (`cd`, `echo`)
 * is left out; one PATH does not find is keyed as null, so installing it later misses.
 * Programs inside the repository are code: the code digest keys them, only their `#!`
 * interpreter is added here. A `python` that is itself a script (pyenv's shim, which picks
 * the interpreter from `.python-version` or a global file when it runs) is asked which
 * interpreter it starts, and that one is keyed too (`python3 (what its launcher starts)`):
 * the shim's bytes are the same whichever Python it runs. What the started programs start
 * in turn otherwise (`sh -c "…"`, `subprocess`) is not seen: the pipeline's `fingerprint`
 * covers that.
 */
export async function commandInterpreters(
  cmd: string,
  options: CommandInterpretersOptions,
): Promise<Record<string, Interpreter | null>> {
  const found: Record<string, Interpreter | null> = {};
  for (const word of commandWords(cmd)) {
    if (word in found) continue;
    const file = await locate(word, options);
    if (file === null) {
      found[word] = null;
      continue;
    }
    const real = await realpath(file);
    const shebang = await shebangProgram(real);
    if (!isInside(real, options.repoRoot)) {
      found[word] = await interpreterAt(real, options.digests);
      if (shebang !== null) await addLaunched(found, word, file, options);
    }
    if (shebang !== null && !(shebang in found)) {
      const program = await locate(shebang, options);
      found[shebang] =
        program === null ? null : await interpreterAt(await realpath(program), options.digests);
      const launcher = program === null ? null : await realpath(program);
      if (
        launcher !== null &&
        !isInside(launcher, options.repoRoot) &&
        (await shebangProgram(launcher)) !== null
      ) {
        await addLaunched(found, shebang, program as string, options);
      }
    }
  }
  return found;
}

/**
 * For a script outside the repository named like Python (`file` as PATH found it, whose
 * name the shim reads), the interpreter it starts, keyed under `word (what its launcher
 * starts)`: null when it cannot say. A script inside the repository is never started
 * here: it is code, and would run outside a sandbox.
 */
async function addLaunched(
  found: Record<string, Interpreter | null>,
  word: string,
  file: string,
  options: CommandInterpretersOptions,
): Promise<void> {
  if (!options.probeLauncher || !PYTHON_NAME.test(path.basename(file))) return;
  const launched = await options.probeLauncher(file);
  found[`${word}${LAUNCHED}`] =
    launched === null
      ? null
      : {
          path: launched.executable,
          digest: (await interpreterAt(launched.realPath, options.digests)).digest,
        };
}

/**
 * A program as keyed. One that can be run but not read (mode `--x`) is keyed by its path
 * alone: the key then says so rather than failing the stage.
 */
async function interpreterAt(realPath: string, digests: InterpreterDigests): Promise<Interpreter> {
  const digest = await digests
    .digestOf(realPath)
    .catch((error: NodeJS.ErrnoException) => `unreadable (${error.code ?? 'error'})`);
  return { path: realPath, digest };
}

/** The word naming the program of each simple command in a shell command line. */
export function commandWords(cmd: string): string[] {
  // Variables are left as written: a word made of one is not a program name anyone can key.
  let tokens: ReturnType<typeof parse>;
  try {
    tokens = parse(cmd, (name) => `$${name}`);
  } catch {
    // The shell will say what is wrong with the line when it runs it.
    return [];
  }
  const words: string[] = [];
  let atStart = true;
  let afterRedirect = false;
  let inWrapper = false;
  for (const token of tokens) {
    if (typeof token !== 'string') {
      if ('op' in token && COMMAND_SEPARATORS.has(token.op)) {
        atStart = true;
        inWrapper = false;
      } else if ('op' in token && token.op !== 'glob') {
        afterRedirect = true;
      }
      continue;
    }
    if (afterRedirect) {
      afterRedirect = false;
      continue;
    }
    if (!atStart) continue;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(token)) continue;
    if (inWrapper && token.startsWith('-')) continue;
    if (WRAPPERS.has(token)) {
      inWrapper = true;
      continue;
    }
    atStart = false;
    inWrapper = false;
    if (SHELL_OWN.has(token) || token.includes('$')) continue;
    words.push(token);
  }
  return words;
}

/** Where the shell would find a program: a path as given, else the first match on PATH. */
async function locate(word: string, options: CommandInterpretersOptions): Promise<string | null> {
  if (word.includes('/')) {
    const file = path.resolve(options.cwd, word);
    return (await which(file, { nothrow: true })) ?? null;
  }
  return (await which(word, { path: options.path, nothrow: true })) ?? null;
}

/** The program a script's `#!` line names (`env`'s argument for `#!/usr/bin/env python3`). */
async function shebangProgram(file: string): Promise<string | null> {
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return null;
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead).toString('latin1');
    if (!head.startsWith('#!')) return null;
    const words = head.slice(2).split('\n')[0]?.trim().split(/\s+/) ?? [];
    const program = words[0];
    if (!program) return null;
    if (path.basename(program) !== 'env') return program;
    return words.slice(1).find((word) => !word.startsWith('-') && !word.includes('=')) ?? null;
  } finally {
    await handle.close();
  }
}

function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
