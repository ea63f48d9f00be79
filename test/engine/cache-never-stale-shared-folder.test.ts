import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, statuses } from '../helpers/run-cli.js';

/**
 * A stage downstream of a directory out is keyed by that out's manifest, not by the
 * folder on disk. A careless sibling stage that writes into the folder (augmented images
 * saved beside the downloaded ones) changed what the downstream stage read without
 * changing its key, and the after-check skipped directory outs: its result was stored
 * under the pristine folder's key and restored where the folder is pristine again
 * (`fluksio run train`, or once the sibling writes elsewhere).
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const pipeline = (augment: string) => `version: 1
stages:
  download:
    cmd: mkdir -p data/empty data/__pycache__ && echo a > data/a.txt && echo b > data/b.txt && echo x > data/__pycache__/m.pyc
    outs: [data]
    code: false
  augment:
    cmd: ${augment} && echo done > aug.txt
    deps: [data]
    outs: [aug.txt]
    code: false
  train:
    cmd: find data -type f | grep -v pycache | wc -l > model.txt
    deps: [data]
    outs: [model.txt]
    code: false
`;

const model = async () => (await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).trim();

test(
  'a stage that writes into an upstream directory out leaves neither it nor its sibling downstream cached',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/data/\n/aug/\n/aug.txt\n/model.txt\n',
        'fluksio.yml': pipeline('cat data/a.txt data/b.txt > data/c.txt'),
      },
    });
    await repo.commitAll('pipeline');
    const first = await runJson([], { cwd: repo.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(await model()).toBe('3');
    expect(stageOf(first.report, 'augment').dirtyReasons).toEqual([
      'data no longer holds what download made when augment ended (changed before or while it ran)',
    ]);
    expect(stageOf(first.report, 'train').dirtyReasons).toEqual([
      'data no longer holds what download made when train ended (changed before or while it ran)',
    ]);

    // download is restored as it made data/: train, re-run alone, counts what is there.
    const alone = await runJson(['train'], { cwd: repo.dir });
    expect(statuses(alone.report)).toEqual({ download: 'cached', train: 'ran' });
    expect(await model()).toBe('2');

    // The sibling fixed to write a folder of its own: train runs on the pristine data.
    await repo.write('fluksio.yml', pipeline('mkdir -p aug && cat data/a.txt data/b.txt > aug/c.txt'));
    await repo.commitAll('augment into a folder of its own');
    const fixed = await runJson([], { cwd: repo.dir });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(await model()).toBe('2');
    expect(stageOf(fixed.report, 'train').dirtyReasons).toEqual([]);
  },
  SLOW,
);

test(
  'a directory out nobody writes into keeps its downstream stage cached, empty folders and bytecode included',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/data/\n/aug/\n/aug.txt\n/model.txt\n',
        'fluksio.yml': pipeline('mkdir -p aug && cat data/a.txt data/b.txt > aug/c.txt'),
      },
    });
    await repo.commitAll('pipeline');
    const first = await runJson([], { cwd: repo.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.stages.flatMap((stage) => stage.dirtyReasons)).toEqual([]);
    const second = await runJson([], { cwd: repo.dir });
    expect(statuses(second.report)).toEqual({ download: 'cached', augment: 'cached', train: 'cached' });
    expect(await model()).toBe('2');
  },
  SLOW,
);
