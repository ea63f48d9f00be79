import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import which from 'which';
import type { Interpreter } from '../../schemas/key-inputs.js';
import { commandPrograms } from './command-programs.js';
import type { InterpreterDigests } from './interpreter-digests.js';
import type { LauncherProbe } from './launched-python.js';
import { PYTHON_NAME } from './why-not-python.js';

export interface CommandInterpretersOptions {
  /** The stage's PATH. */
  path: string;
  /** Where the command starts: relative program paths (`./run.sh`) start here, or where a `cd` before them goes. */
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
const LAUNCHED = ' (what its launcher starts)';
/** The same, for a launcher started in a folder a `cd` named: `python3 (what its launcher starts in sub)`. */
const LAUNCHED_IN = ' (what its launcher starts in ';

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
 * the shim's bytes are the same whichever Python it runs. A program started after a `cd`
 * (`cd sub && python3 x.py`, a DVC stage's `wdir`) is found, and its launcher asked, in that
 * folder (commandPrograms), keyed as `python3 (what its launcher starts in sub)` and
 * `sub/run.sh`; a line without `cd` is keyed as before. What the started programs start
 * in turn otherwise (`sh -c "…"`, `subprocess`) is not seen: the pipeline's `fingerprint`
 * covers that.
 */
export async function commandInterpreters(
  cmd: string,
  options: CommandInterpretersOptions,
): Promise<Record<string, Interpreter | null>> {
  const found: Record<string, Interpreter | null> = {};
  const seen = new Set<string>();
  for (const { word, dir } of commandPrograms(cmd)) {
    const name = programName(word, dir);
    if (seen.has(`${dir}\0${name}`)) continue;
    seen.add(`${dir}\0${name}`);
    const at = path.resolve(options.cwd, dir);
    const file = await locate(word, at, options);
    if (file === null) {
      found[name] = null;
      continue;
    }
    const real = await realpath(file);
    const shebang = await shebangProgram(real);
    if (!isInside(real, options.repoRoot)) {
      found[name] = await interpreterAt(real, options.digests);
      if (shebang !== null) await addLaunched(found, launchedName(name, dir), file, at, options);
    }
    if (shebang === null) continue;
    // The kernel finds a relative `#!` program from the folder the script starts in, as the shell does.
    const shebangName = programName(shebang, dir);
    const shebangLaunched = launchedName(shebangName, dir);
    if (shebangName in found && (dir === '.' || shebangLaunched in found)) continue;
    const program = await locate(shebang, at, options);
    if (!(shebangName in found)) {
      found[shebangName] =
        program === null ? null : await interpreterAt(await realpath(program), options.digests);
    }
    const launcher = program === null ? null : await realpath(program);
    if (
      launcher !== null &&
      !isInside(launcher, options.repoRoot) &&
      (await shebangProgram(launcher)) !== null
    ) {
      await addLaunched(found, shebangLaunched, program as string, at, options);
    }
  }
  return found;
}

/**
 * A program's name in the key: the word as written, or, for a relative path started in
 * another folder (`cd sub && ./run.sh`), that path from `.` (`sub/run.sh`).
 */
function programName(word: string, dir: string): string {
  return dir === '.' || !word.includes('/') || path.isAbsolute(word) ? word : path.join(dir, word);
}

/**
 * The key of what a launcher started as `name` in `dir` starts: `python3 (what its launcher
 * starts)`, or `python3 (what its launcher starts in sub)` when a `cd` before it changed folder.
 */
function launchedName(name: string, dir: string): string {
  return dir === '.' ? `${name}${LAUNCHED}` : `${name}${LAUNCHED_IN}${dir})`;
}

/** Whether a key's name is that of what a launcher starts (launchedName). */
export function isLaunchedName(name: string): boolean {
  return name.endsWith(LAUNCHED) || name.includes(LAUNCHED_IN);
}

/**
 * For a script outside the repository named like Python (`file` as PATH found it, whose
 * name the shim reads), the interpreter it starts in `dir` (absolute), keyed under `key`
 * (launchedName): null when it cannot say. A script inside the repository is never started
 * here: it is code, and would run outside a sandbox.
 */
async function addLaunched(
  found: Record<string, Interpreter | null>,
  key: string,
  file: string,
  dir: string,
  options: CommandInterpretersOptions,
): Promise<void> {
  if (!options.probeLauncher || !PYTHON_NAME.test(path.basename(file))) return;
  const launched = await options.probeLauncher(file, dir);
  found[key] =
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

/**
 * The programs a command line starts that are files of the repository (`tools/python3`, a
 * wrapper that sets variables and starts Python; `.venv/bin/python3` in a virtual
 * environment kept in the project, ignored), each keyed under its name by its
 * repository-relative real path and the digest of its bytes. The whole code digest keys
 * those git sees, but a traced stage's key holds no code digest, and the Python they start
 * reports only its own reads: the wrapper is read by the kernel and a shell. Relative, so
 * that two checkouts of one commit key them alike.
 */
export async function repositoryPrograms(
  cmd: string,
  options: CommandInterpretersOptions,
): Promise<Record<string, Interpreter>> {
  const found: Record<string, Interpreter> = {};
  const root = await realpath(options.repoRoot).catch(() => options.repoRoot);
  for (const { word, dir } of commandPrograms(cmd)) {
    const name = programName(word, dir);
    if (name in found) continue;
    const file = await locate(word, path.resolve(options.cwd, dir), options);
    if (file === null) continue;
    const real = await realpath(file);
    if (!isInside(real, root)) continue;
    const { digest } = await interpreterAt(real, options.digests);
    found[name] = { path: path.relative(root, real).split(path.sep).join('/'), digest };
  }
  return found;
}

/** The word naming the program of each simple command in a shell command line (commandPrograms). */
export function commandWords(cmd: string): string[] {
  return commandPrograms(cmd).map((program) => program.word);
}

/** Where the shell in `dir` (absolute) would find a program: a path as given, else the first match on PATH. */
async function locate(
  word: string,
  dir: string,
  options: CommandInterpretersOptions,
): Promise<string | null> {
  if (word.includes('/')) {
    const file = path.resolve(dir, word);
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
