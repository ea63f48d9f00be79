import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { READ_TRACE_HOOK } from './read-trace-hook.js';

/** What the Python processes of one stage execution reported, repository-relative. */
export interface ReadTrace {
  /** Files opened for reading, modules executed, extension modules imported. */
  files: string[];
  /** Directories the program listed. */
  dirs: string[];
  /** Directories the import system listed. */
  moduleDirs: string[];
  /**
   * Paths looked up without being opened → the state the first lookup saw (`stat absent`,
   * `stat file 12 -`…); null when processes of the stage saw it differently.
   */
  lookups: Record<string, string | null>;
  /** Why the reads are not all known (a non-Python program started…); null when they are. */
  untraced: string | null;
}

/** A run-private place for one stage execution's trace; dispose() removes it. */
export interface ReadTraceSession {
  /** Variables to give the stage: `PYTHONPATH` with the hook's directory first, and where to report. */
  env: Record<string, string>;
  /** The session's private directory: a sandboxed stage must be able to write its reports there. */
  dir: string;
  collect(): Promise<ReadTrace>;
  dispose(): Promise<void>;
}

/**
 * Prepares tracing for one execution of a Python stage: a private directory holding the
 * hook's `sitecustomize.py` and an empty report folder. `pythonPath` is the stage's own
 * `PYTHONPATH`, kept after the hook's directory.
 */
export async function startReadTrace(options: {
  repoRoot: string;
  pythonPath: string | undefined;
}): Promise<ReadTraceSession> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-trace-'));
  const site = path.join(dir, 'site');
  const reports = path.join(dir, 'reports');
  await mkdir(site);
  await mkdir(reports);
  await writeFile(path.join(site, 'sitecustomize.py'), READ_TRACE_HOOK);
  const root = await realpath(options.repoRoot);
  return {
    env: {
      PYTHONPATH: options.pythonPath ? `${site}:${options.pythonPath}` : site,
      FLUKSIO_TRACE_DIR: reports,
      FLUKSIO_TRACE_ROOT: root,
    },
    dir,
    collect: () => collectReports(reports, root),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

async function collectReports(reports: string, root: string): Promise<ReadTrace> {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const moduleDirs = new Set<string>();
  const lookups = new Map<string, string | null>();
  let untraced: string | null = null;
  let processes = 0;
  let pythonStarts = 0;
  for (const name of await readdir(reports)) {
    const text = await readReport(path.join(reports, name));
    if (text === null) {
      untraced ??= `left ${name} in its trace reports, which is not a report fluksio wrote`;
      continue;
    }
    // The first lookup of a path in a process saw what was there before the process changed it.
    const looked = new Map<string, string>();
    for (const line of text.split('\n')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const kind = line.slice(0, tab);
      const value = line.slice(tab + 1);
      if (kind === 'S') processes += 1;
      else if (kind === 'P') pythonStarts += 1;
      else if (kind === 'X') untraced ??= `it ${value}`;
      else if (kind === 'E') {
        const nul = value.indexOf('\0');
        const repoPath = nul < 0 ? null : repoPathOf(root, value.slice(nul + 1));
        if (repoPath !== null && !looked.has(repoPath)) looked.set(repoPath, value.slice(0, nul));
      } else {
        const repoPath = repoPathOf(root, value);
        if (repoPath === null) continue;
        if (kind === 'R') files.add(repoPath);
        else if (kind === 'L') dirs.add(repoPath);
        else if (kind === 'I') moduleDirs.add(repoPath);
      }
    }
    for (const [repoPath, state] of looked) {
      lookups.set(repoPath, lookups.has(repoPath) && lookups.get(repoPath) !== state ? null : state);
    }
  }
  if (processes === 0) untraced ??= 'the Python process left no report';
  else if (processes < 1 + pythonStarts) untraced ??= 'a Python process it started left no report';
  return {
    files: [...files].sort(),
    dirs: [...dirs].sort(),
    moduleDirs: [...moduleDirs].sort(),
    lookups: Object.fromEntries([...lookups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    untraced,
  };
}

/** The largest report read: a stage reading a million files writes about a hundred megabytes. */
const MAX_REPORT_BYTES = 256 * 2 ** 20;

/**
 * A report's text, or null when the entry is not one: the stage's processes write the
 * reports directory, so an entry may be a FIFO (a read would wait forever), a symlink (to
 * /dev/zero, or a file of the runner's) or a file too large to hold. Opened without
 * following a link and without blocking, then read only if it is a regular file.
 */
async function readReport(file: string): Promise<string | null> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => null,
  );
  if (handle === null) return null;
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_REPORT_BYTES) return null;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Bytecode and fluksio's own state are never inputs (the module's source is). */
const NEVER_READ = /(?:^|\/)(?:__pycache__|\.fluksio)(?:\/|$)|\.pyc$/;

function repoPathOf(root: string, absolute: string): string | null {
  const relative = path.relative(root, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const repoPath = relative.split(path.sep).join('/') || '.';
  return NEVER_READ.test(repoPath) ? null : repoPath;
}
