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

/**
 * Reports are counted against the Python starts announced (`subprocess`, `os.exec*`), but
 * multiprocessing's spawn starts Python unannounced, and its processes report too: a child
 * that leaves no report must be named by its parent, or a spawned worker stands in for it.
 */
test.each([
  ['isolated (-I)', "[sys.executable, '-I', 'child.py']", null, 'started python3 with -I'],
  ['flags together (-BE)', "[sys.executable, '-BE', 'child.py']", null, 'started python3 with -E'],
  [
    'without site (-S)',
    "[sys.executable, '-W', 'ignore', '-S', 'child.py']",
    null,
    'started python3 with -S',
  ],
  [
    'with an environment of its own',
    "[sys.executable, 'child.py']",
    "{'PATH': os.environ['PATH']}",
    "started python3 with an environment without fluksio's PYTHONPATH",
  ],
  [
    'with PYTHONPATH replaced in its inherited environment',
    "[sys.executable, 'child.py']",
    "dict(os.environ, PYTHONPATH='lib')",
    "started python3 with an environment without fluksio's PYTHONPATH",
  ],
  ['as a plain child', "[sys.executable, 'child.py']", null, null],
  ['with -I in its own arguments', "[sys.executable, '-c', 'print(1)', '-I']", null, null],
  ['with the environment it inherits', "[sys.executable, '-B', 'child.py']", 'dict(os.environ)', null],
])(
  'a Python child started %s is named by its parent when it cannot report, whatever else reports',
  async (_how, argv, env, untraced) => {
    repoRoot = await mkdtemp(path.join(tmpdir(), 'fluksio-trace-repo-'));
    session = await startReadTrace({ repoRoot, pythonPath: undefined });
    await writeFile(path.join(repoRoot, 'child.py'), 'print("child")\n');
    const program = [
      'import multiprocessing, os, subprocess, sys',
      'def work(x):',
      '    return x',
      "if __name__ == '__main__':",
      "    multiprocessing.set_start_method('spawn')",
      '    with multiprocessing.Pool(1) as pool:',
      '        pool.map(work, [1])',
      `    subprocess.run(${argv}, env=${env ?? 'None'}, check=True)`,
    ].join('\n');
    await writeFile(path.join(repoRoot, 'main.py'), program);
    execFileSync('python3', ['main.py'], { cwd: repoRoot, env: { ...process.env, ...session.env } });
    const trace = await session.collect();
    if (untraced === null) expect(trace.untraced).toBeNull();
    else expect(trace.untraced).toBe(`it ${untraced}, so it leaves no report`);
  },
  60_000,
);
