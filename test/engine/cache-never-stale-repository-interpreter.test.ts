import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * A stage whose command starts a `python3` that is a file of the repository (a wrapper
 * script that sets the environment up, an interpreter in a virtual environment kept in the
 * project) is traced: the Python it starts reports its reads. The wrapper itself is read
 * by the kernel and a shell, which report nothing, and a traced key holds no code digest:
 * an edit of the wrapper left the stage restored with what the old wrapper made.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const PIPELINE = (program: string) => `version: 1
stages:
  train:
    cmd: ${program} train.py
    deps: [train.py]
    outs: [results/model.txt]
`;

const TRAIN = `import os
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(os.environ.get("SCALE", "none") + "\\n")
`;

const wrapper = (scale: number) => `#!/bin/sh
export SCALE=${scale}
exec python3 "$@"
`;

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

const model = () => readFile(path.join(repo.dir, 'results/model.txt'), 'utf8');

async function writeWrapper(relPath: string, scale: number): Promise<void> {
  await repo.write(relPath, wrapper(scale));
  await chmod(path.join(repo.dir, relPath), 0o755);
}

async function expectEqualsUncached(): Promise<void> {
  const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['results/model.txt'] });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, ['results/model.txt'])).toEqual(twin.outputs);
}

test.each([
  ['a committed wrapper', 'tools/python3', '/results/\n'],
  ['an ignored one', '.venv/bin/python3', '/results/\n/.venv/\n'],
])(
  'a python3 of the repository (%s) that is edited re-runs the stage it starts, which stays traced',
  async (_what, program, ignored) => {
    repo = await makeRepo({
      files: {
        '.gitignore': ignored,
        'fluksio.yml': PIPELINE(program),
        'train.py': TRAIN,
        'README.md': 'a\n',
      },
      commit: false,
    });
    await writeWrapper(program, 1);
    await repo.commitAll('initial');
    const first = stageOf(await run(), 'train');
    expect(first.status).toBe('ran');
    expect(first.notes.filter((note) => note.includes('not traced'))).toEqual([]);
    expect(await model()).toBe('1\n');
    // Traced: a file it does not read re-runs nothing.
    await repo.write('README.md', 'b\n');
    expect(stageOf(await run(), 'train').status).toBe('cached');

    await writeWrapper(program, 2);
    await repo.commitAll('scale 2');
    const rerun = stageOf(await run(), 'train');
    expect(rerun.status).toBe('ran');
    expect(rerun.reasons).toContain(`${program} (${program}) changed`);
    expect(await model()).toBe('2\n');
    await expectEqualsUncached();
  },
  SLOW,
);
