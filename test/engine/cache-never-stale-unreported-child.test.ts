import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * A traced stage whose Python child leaves no report (`-I`) must count as untraced: what
 * the child reads is in no read set. Reports were only counted against the Python starts
 * announced, and multiprocessing's spawn starts Python processes unannounced that report
 * too: one stood in for the silent child, and an edit to the file only the child read left
 * the stage restored.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

test(
  'a file only an isolated Python child reads re-runs the stage, however many spawned workers report',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/out.txt\n',
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 train.py
    outs: [out.txt]
`,
        'train.py': `import multiprocessing, subprocess, sys

def work(x):
    return x

if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    with multiprocessing.Pool(1) as pool:
        pool.map(work, [1])
    out = subprocess.run([sys.executable, "-I", "helper.py"], capture_output=True, text=True, check=True).stdout
    open("out.txt", "w").write(out)
`,
        'helper.py': 'print(open("config.txt").read().strip())\n',
        'config.txt': 'one\n',
      },
    });
    const first = await run();
    expect(stageOf(first, 'train').notes).toContain(
      "train: not traced (it started python3 with -I, so it leaves no report): keyed on the repository's whole code",
    );
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('one\n');

    await repo.write('config.txt', 'two\n');
    const edited = await run();
    expect(stageOf(edited, 'train')).toMatchObject({ status: 'ran', reasons: ['config.txt changed'] });
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('two\n');
    const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['out.txt'] });
    expect(await snapshotPaths(repo.dir, ['out.txt'])).toEqual(twin.outputs);
  },
  SLOW,
);
