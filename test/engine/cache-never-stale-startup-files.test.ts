import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

const execFileAsync = promisify(execFile);

/**
 * Python reads some files before fluksio's audit hook is installed: `site` processes the
 * `.pth` files of the site-packages folders (an editable install's path, `import` lines)
 * while it starts, and imports `sitecustomize` only after. For a virtual environment kept
 * in the project (`.venv/`, ignored), those files decide which modules a traced stage
 * imports, yet no report named them: a `.pth` pointing elsewhere left the stage restored.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

const model = () => readFile(path.join(repo.dir, 'results/model.txt'), 'utf8');

test(
  "a .pth file of a virtual environment kept in the project is read by the stage's Python: pointing it elsewhere re-runs the stage",
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n/.venv/\n',
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: .venv/bin/python3 train.py
    deps: [train.py]
    outs: [results/model.txt]
`,
        'train.py': `import os, helper
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(helper.VERSION + "\\n")
`,
        'vendor/v1/helper.py': 'VERSION = "v1"\n',
        'vendor/v2/helper.py': 'VERSION = "v2"\n',
        'README.md': 'a\n',
      },
    });
    await execFileAsync('python3', ['-m', 'venv', '--without-pip', '.venv'], { cwd: repo.dir });
    const { stdout } = await execFileAsync(
      path.join(repo.dir, '.venv/bin/python3'),
      ['-c', 'import site; print(site.getsitepackages()[0])'],
      { cwd: repo.dir },
    );
    const pth = path.join(stdout.trim(), 'vendor.pth');
    const pointTo = (version: string) =>
      repo.write(path.relative(repo.dir, pth), `${repo.dir}/vendor/${version}\n`);

    await pointTo('v1');
    const first = stageOf(await run(), 'train');
    expect(first.status).toBe('ran');
    expect(first.notes.filter((note) => note.includes('not traced'))).toEqual([]);
    expect(await model()).toBe('v1\n');
    // Traced: a file it does not read re-runs nothing.
    await repo.write('README.md', 'b\n');
    expect(stageOf(await run(), 'train').status).toBe('cached');

    await pointTo('v2');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('v2\n');
    const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['results/model.txt'] });
    expect(twin.report.run.status).toBe('succeeded');
    expect(await snapshotPaths(repo.dir, ['results/model.txt'])).toEqual(twin.outputs);
  },
  SLOW,
);
