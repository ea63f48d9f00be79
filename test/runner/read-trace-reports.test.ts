import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { startReadTrace, type ReadTraceSession } from '../../runner/keys/read-trace.js';

let session: ReadTraceSession | null = null;
let repoRoot: string | null = null;

afterEach(async () => {
  await session?.dispose();
  if (repoRoot) await rm(repoRoot, { recursive: true, force: true });
  session = null;
  repoRoot = null;
});

/** A trace session over a fresh directory, with one report as a traced Python process writes it. */
async function tracedStage() {
  repoRoot = await mkdtemp(path.join(tmpdir(), 'fluksio-trace-repo-'));
  session = await startReadTrace({ repoRoot, pythonPath: undefined });
  const reports = session.env.FLUKSIO_TRACE_DIR as string;
  await writeFile(path.join(reports, '100'), `S\t1\nR\t${path.join(repoRoot, 'conf.json')}\n`);
  return { session, reports };
}

test('a report is read: what the stage read, traced', async () => {
  const { session } = await tracedStage();
  expect(await session.collect()).toMatchObject({ files: ['conf.json'], untraced: null });
});

test('a FIFO the stage left among its reports is not read (it would block the runner): the stage counts as untraced', async () => {
  const { session, reports } = await tracedStage();
  execFileSync('mkfifo', [path.join(reports, '200')]);
  const trace = await session.collect();
  expect(trace.untraced).toBe('left 200 in its trace reports, which is not a report fluksio wrote');
  expect(trace.files).toEqual(['conf.json']);
});

test('a symlink among the reports (to /dev/zero, or a file of the runner) is not followed', async () => {
  const { session, reports } = await tracedStage();
  await symlink('/dev/zero', path.join(reports, '300'));
  const trace = await session.collect();
  expect(trace.untraced).toBe('left 300 in its trace reports, which is not a report fluksio wrote');
});

test('a traced program that asks os.supports_follow_symlinks (shutil copying a link as a link) works as it does untraced', async () => {
  repoRoot = await mkdtemp(path.join(tmpdir(), 'fluksio-trace-repo-'));
  session = await startReadTrace({ repoRoot, pythonPath: undefined });
  await writeFile(path.join(repoRoot, 'weights.bin'), 'w');
  await symlink('weights.bin', path.join(repoRoot, 'current'));
  // copystat stats a link itself only through an os.stat that os.supports_follow_symlinks
  // holds, and shutil.rmtree resists symlink attacks only when os.stat is in supports_dir_fd.
  const program = [
    'import os, shutil',
    "shutil.copy2('current', 'copied', follow_symlinks=False)",
    "assert os.readlink('copied') == 'weights.bin'",
    "sets = ['supports_dir_fd', 'supports_fd', 'supports_follow_symlinks', 'supports_effective_ids']",
    'print([[f in getattr(os, s) for s in sets] for f in (os.stat, os.lstat, os.access, os.readlink)])',
  ].join('\n');
  const untraced = execFileSync('python3', ['-c', program.replaceAll('copied', 'copied-untraced')], {
    cwd: repoRoot,
  });
  const traced = execFileSync('python3', ['-c', program], {
    cwd: repoRoot,
    env: { ...process.env, ...session.env },
  });
  expect(traced.toString()).toBe(untraced.toString());
  expect((await session.collect()).untraced).toBeNull();
});
