import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runJson, type RunJson } from './run-cli.js';

const exec = promisify(execFile);

/** A path's state as a stage downstream would see it: a file's bytes and mode, a link, a tree. */
export type PathSnapshot =
  | { kind: 'missing' }
  | { kind: 'file'; mode: number; bytes: string }
  | { kind: 'symlink'; target: string }
  | { kind: 'dir'; entries: Record<string, PathSnapshot> };

/** Reads `relPaths` of a work tree (files, symlinks and whole directories, empty ones too). */
export async function snapshotPaths(dir: string, relPaths: string[]): Promise<Record<string, PathSnapshot>> {
  const snapshot: Record<string, PathSnapshot> = {};
  for (const relPath of relPaths) snapshot[relPath] = await snapshotOf(path.join(dir, relPath));
  return snapshot;
}

async function snapshotOf(absPath: string): Promise<PathSnapshot> {
  const stats = await lstat(absPath).catch(() => null);
  if (stats === null) return { kind: 'missing' };
  if (stats.isSymbolicLink()) return { kind: 'symlink', target: await readlink(absPath) };
  if (stats.isDirectory()) {
    const entries: Record<string, PathSnapshot> = {};
    for (const name of (await readdir(absPath)).sort())
      entries[name] = await snapshotOf(path.join(absPath, name));
    return { kind: 'dir', entries };
  }
  return { kind: 'file', mode: stats.mode & 0o777, bytes: (await readFile(absPath)).toString('base64') };
}

export interface UncachedTwin {
  /** What `fluksio run --no-cache` reported in the copy. */
  report: RunJson;
  /** The given paths as the uncached run left them. */
  outputs: Record<string, PathSnapshot>;
}

/**
 * Runs the same tree again with no cache at all: copies the work tree as it is now (git
 * metadata, modes, symlinks and untracked files included, `.fluksio/` and the given
 * outputs left out) into a fresh directory and runs `fluksio run --no-cache` there, with
 * an empty store. What it leaves at `outputs` is what a cached run must leave too: the
 * stage cache's promise is that a hit is indistinguishable from a fresh execution.
 */
export async function runUncachedTwin(options: {
  dir: string;
  outputs: string[];
  args?: string[];
  env?: Record<string, string | undefined>;
}): Promise<UncachedTwin> {
  const twinParent = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-twin-')));
  const twin = path.join(twinParent, path.basename(options.dir));
  try {
    await exec('cp', ['-a', options.dir, twin]);
    await rm(path.join(twin, '.fluksio'), { recursive: true, force: true });
    for (const relPath of options.outputs)
      await rm(path.join(twin, relPath), { recursive: true, force: true });
    const result = await runJson(['--no-cache', ...(options.args ?? [])], {
      cwd: twin,
      ...(options.env ? { env: options.env } : {}),
    });
    if (result.code !== 0 && result.code !== 1) {
      throw new Error(`the uncached twin run could not start (exit ${result.code}):\n${result.stderr}`);
    }
    return { report: result.report, outputs: await snapshotPaths(twin, options.outputs) };
  } finally {
    await rm(twinParent, { recursive: true, force: true });
  }
}
