import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * A traced Python stage is keyed on what its processes reported reading. A read that no
 * report names, or names as another file, leaves the stage restored with a result that
 * the input it really read no longer gives: a file the shell found for it with a bracket
 * glob, a file opened relative to a directory descriptor, a path through a link and `..`.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const pipeline = (cmd: string) => `version: 1
stages:
  train:
    cmd: ${cmd}
    deps: [train.py]
    outs: [results/model.txt]
`;

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

const model = () => readFile(path.join(repo.dir, 'results/model.txt'), 'utf8');

async function expectEqualsUncached(): Promise<void> {
  const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['results/model.txt'] });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, ['results/model.txt'])).toEqual(twin.outputs);
}

/** Writes the sum of the numbers in the files named on its command line. */
const SUM_ARGUMENTS = `import os, sys
total = sum(int(open(name).read()) for name in sys.argv[1:])
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(f"{total}\\n")
`;

test(
  'a file the shell adds to the command line through a bracket glob re-runs the stage',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': pipeline('python3 train.py data/part[0-9].csv'),
        'train.py': SUM_ARGUMENTS,
        'data/part1.csv': '1\n',
      },
    });
    const first = stageOf(await run(), 'train');
    expect(first.status).toBe('ran');
    expect(first.notes).toContain(
      "train: not traced (the shell expands a glob): keyed on the repository's whole code",
    );
    expect(await model()).toBe('1\n');

    await repo.write('data/part2.csv', '2\n');
    await repo.commitAll('a second part');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('3\n');
    await expectEqualsUncached();
  },
  SLOW,
);

test(
  'a quoted bracket in an argument is no glob: the stage stays traced and cached',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': pipeline(`python3 train.py '[1,2]' "x[0]" data/\\[1\\].csv`),
        'train.py': `import os, sys
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(" ".join(sys.argv[1:]) + "\\n")
`,
        'README.md': 'read me\n',
      },
    });
    const first = stageOf(await run(), 'train');
    expect(first.status).toBe('ran');
    expect(await model()).toBe('[1,2] x[0] data/[1].csv\n');
    await repo.write('README.md', 'read me again\n');
    await repo.commitAll('docs');
    expect(stageOf(await run(), 'train').status).toBe('cached');
  },
  SLOW,
);

test(
  'a file opened relative to a directory descriptor re-runs the stage when edited',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': pipeline('python3 train.py'),
        'train.py': `import os
folder = os.open("data", os.O_RDONLY)
value = os.read(os.open("x.csv", os.O_RDONLY, dir_fd=folder), 100).decode()
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(value)
`,
        'data/x.csv': '1\n',
      },
    });
    const first = stageOf(await run(), 'train');
    expect(first.status).toBe('ran');
    expect(first.notes).toContain(
      "train: not traced (it opened a path relative to a directory descriptor): keyed on the repository's whole code",
    );
    expect(await model()).toBe('1\n');

    await repo.write('data/x.csv', '2\n');
    await repo.commitAll('new data');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('2\n');
    await expectEqualsUncached();
  },
  SLOW,
);

test(
  'a file read through a link and `..` is keyed as the file the kernel opens, not the one the path spells',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': pipeline('python3 train.py'),
        'train.py': `import os
value = open("current/../labels.csv").read()
found = os.path.isfile("current/../extra.csv")
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(f"{value.strip()} {found}\\n")
`,
        'datasets/labels.csv': 'v1\n',
        'datasets/v1/train.csv': '1\n',
      },
      commit: false,
    });
    await symlink('datasets/v1', path.join(repo.dir, 'current'));
    await repo.commitAll('initial');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('v1 False\n');

    await repo.write('datasets/labels.csv', 'v2\n');
    await repo.commitAll('new labels');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('v2 False\n');

    await repo.write('datasets/extra.csv', '\n');
    await repo.commitAll('extra data');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('v2 True\n');
    await expectEqualsUncached();
  },
  SLOW,
);
