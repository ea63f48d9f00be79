import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, statuses } from '../helpers/run-cli.js';

/**
 * A dep declared through a committed symlink (`current -> models`) to another stage's out
 * was no edge of the stage graph, which compared paths as written: `evaluate` ran, or was
 * restored from the cache, before `train` made the model of this run's params, so the run
 * with lr=1 ended with evaluate `cached` and its score made from the lr=2 model. The graph
 * a run schedules by now also follows the work tree's links.
 */

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const TRAIN = `  train:
    cmd: mkdir -p models && echo \${lr} > models/model.txt
    params: [lr]
    outs: [models/model.txt]
    code: false
`;
const EVALUATE = `  evaluate:
    cmd: cat current/model.txt > score.txt
    deps: [current/model.txt]
    outs: [score.txt]
    code: false
`;
const pipeline = (stages: string) =>
  `version: 1\nparams:\n  lr: { type: int, default: 1 }\nstages:\n${stages}`;
const read = async (file: string) => (await readFile(path.join(repo.dir, file), 'utf8')).trim();

test('a dep reached through a symlink to an out of another stage is evaluated after that stage, never from its older out', async () => {
  repo = await makeRepo({
    files: { '.gitignore': '/models/\n/score.txt\n', 'fluksio.yml': pipeline(TRAIN) },
  });
  await symlink('models', path.join(repo.dir, 'current'));
  await repo.commitAll('train');
  expect((await runJson(['lr=1'], { cwd: repo.dir })).code).toBe(0);
  await repo.write('fluksio.yml', pipeline(EVALUATE + TRAIN));
  await repo.commitAll('evaluate the current model');
  for (const lr of ['2', '2', '1']) {
    const { code, report } = await runJson([`lr=${lr}`], { cwd: repo.dir });
    expect(code).toBe(0);
    expect(await read('models/model.txt')).toBe(lr);
    expect(await read('score.txt'), JSON.stringify(statuses(report))).toBe(lr);
  }
}, 120_000);
