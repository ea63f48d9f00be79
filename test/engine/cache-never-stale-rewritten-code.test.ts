import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';

/** Two runs of fluksio, each starting its stages' processes, on a loaded 2-core machine. */
const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

test(
  'a stage that edits its own code file and puts it back is not cached: the next run re-runs it',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/out.txt\n',
        'helper.sh': 'echo one\n',
        // Not Python, so not traced: its key is the code digest of every tracked file,
        // taken before it ran, when helper.sh said "one". It runs helper.sh saying "two".
        'fluksio.yml': `version: 1
stages:
  build:
    cmd: sed -i s/one/two/ helper.sh && sh helper.sh > out.txt && sed -i s/two/one/ helper.sh
    outs: [out.txt]
`,
      },
    });
    const first = await runJson([], { cwd: repo.dir });
    expect(first.code).toBe(0);
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('two\n');
    expect(await readFile(join(repo.dir, 'helper.sh'), 'utf8')).toBe('echo one\n');
    expect(stageOf(first.report, 'build')).toMatchObject({
      status: 'ran',
      dirtyReasons: ['helper.sh was rewritten while build ran'],
    });
    expect(first.report.run.dirty).toBe(true);
    expect(first.report.run.dirtyReasons).toContain('helper.sh was rewritten while build ran');

    const next = await runJson([], { cwd: repo.dir });
    expect(next.code).toBe(0);
    expect(stageOf(next.report, 'build').status).toBe('ran');
  },
  SLOW,
);

test(
  'stages that only read their code, write their outs and are restored stay cached and clean',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/data.txt\n/model.txt\n',
        'helper.sh': 'echo one\n',
        'fluksio.yml': `version: 1
stages:
  prepare:
    cmd: sh helper.sh > data.txt
    outs: [data.txt]
  train:
    cmd: cat data.txt data.txt > model.txt
    deps: [data.txt]
    outs: [model.txt]
`,
      },
    });
    const first = await runJson([], { cwd: repo.dir });
    expect(first.code).toBe(0);
    for (const name of ['prepare', 'train']) {
      expect(stageOf(first.report, name)).toMatchObject({ status: 'ran', dirtyReasons: [] });
    }
    expect(first.report.run).toMatchObject({ dirty: false, dirtyReasons: [] });

    const next = await runJson([], { cwd: repo.dir });
    expect(next.code).toBe(0);
    for (const name of ['prepare', 'train']) expect(stageOf(next.report, name).status).toBe('cached');

    // An upstream result restored by fluksio, then a stage that runs: nothing it did is a rewrite.
    const forced = await runJson(['--force', 'train'], { cwd: repo.dir });
    expect(forced.code).toBe(0);
    expect(stageOf(forced.report, 'prepare').status).toBe('cached');
    expect(stageOf(forced.report, 'train')).toMatchObject({ status: 'ran', dirtyReasons: [] });
    expect(forced.report.run).toMatchObject({ dirty: false, dirtyReasons: [] });
    expect(await readFile(join(repo.dir, 'model.txt'), 'utf8')).toBe('one\none\n');
  },
  SLOW,
);

test(
  "the values fluksio writes into a DVC stage's params.yaml while it runs, and puts back, are no rewrite",
  async () => {
    repo = await makeRepo({
      files: {
        'params.yaml': 'lr: 0.1\n',
        '.gitignore': '/a.txt\n',
        'dvc.yaml': 'stages:\n  a:\n    cmd: cat params.yaml > a.txt\n    params: [lr]\n    outs: [a.txt]\n',
      },
    });
    const first = await runJson(['--pipeline', 'dvc.yaml', 'lr=0.5'], { cwd: repo.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(await readFile(join(repo.dir, 'a.txt'), 'utf8')).toBe('lr: 0.5\n');
    expect(await readFile(join(repo.dir, 'params.yaml'), 'utf8')).toBe('lr: 0.1\n');
    expect(stageOf(first.report, 'a')).toMatchObject({ status: 'ran', dirtyReasons: [] });
    expect(first.report.run).toMatchObject({ dirty: false, dirtyReasons: [] });

    const next = await runJson(['--pipeline', 'dvc.yaml', 'lr=0.5'], { cwd: repo.dir });
    expect(stageOf(next.report, 'a').status).toBe('cached');
  },
  SLOW,
);
