import { readFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { runJson, stageOf, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const env = { DEVICE: 'cpu' };
const run = (args: string[] = [], extraEnv: Record<string, string> = {}) =>
  runJson(args, { cwd: repo.dir, env: { ...env, ...extraEnv } });

async function outputs() {
  const read = (path: string) => readFile(join(repo.dir, path), 'utf8');
  return {
    clean: await read('data/clean.csv'),
    model: await read('model.txt'),
    train: await read('metrics/train.json'),
    eval: await read('metrics/eval.json'),
  };
}

describe('a second run with nothing changed', () => {
  test('restores every stage from the cache, byte for byte, with equal metrics', async () => {
    repo = await makeMlProject();
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    expect(statuses(first.report)).toEqual({ prepare: 'ran', train: 'ran', evaluate: 'ran' });
    const before = await outputs();

    const second = await run();
    expect(second.code).toBe(0);
    expect(statuses(second.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    for (const stage of second.report.stages) expect(stage.cachedFrom).toBe(first.report.run.id);
    expect(await outputs()).toEqual(before);
    expect(second.report.metrics).toEqual(first.report.metrics);
    expect(second.report.metrics).toMatchObject({ 'nested.f1': 0.5 });
    expect(second.report.run.dirty).toBe(false);
  });

  test('outs deleted from the work tree are restored', async () => {
    repo = await makeMlProject();
    await run();
    const before = await outputs();
    await repo.git('clean', '-fdXq', '--', 'data', 'model.txt', 'metrics');
    const again = await run();
    expect(statuses(again.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    expect(await outputs()).toEqual(before);
  });
});

describe('no stale hit', () => {
  test('a committed edit of a helper module re-runs the stages that import it, naming the file', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('helpers.py', 'def scale(x):\n    return x / 1000.0\n');
    await repo.commitAll('tweak helpers');
    const { report } = await run();
    expect(report.run.dirty).toBe(false);
    expect(stageOf(report, 'prepare').status).toBe('cached');
    expect(stageOf(report, 'train').status).toBe('ran');
    expect(stageOf(report, 'train').reasons).toEqual(['helpers.py changed']);
  });

  test('an uncommitted edit re-runs with a dirty stamp, and reverting it finds the committed cache', async () => {
    repo = await makeMlProject();
    const committed = await run();
    const original = await readFile(join(repo.dir, 'helpers.py'), 'utf8');
    await repo.write('helpers.py', 'def scale(x):\n    return x / 7.0\n');
    const dirty = await run();
    expect(dirty.report.run.dirty).toBe(true);
    expect(dirty.report.run.codeDigest).not.toBe(committed.report.run.codeDigest);
    expect(stageOf(dirty.report, 'train')).toMatchObject({ status: 'ran', reasons: ['helpers.py changed'] });

    await repo.write('helpers.py', original);
    const reverted = await run();
    expect(reverted.report.run.dirty).toBe(false);
    expect(reverted.report.run.codeDigest).toBe(committed.report.run.codeDigest);
    expect(stageOf(reverted.report, 'train')).toMatchObject({
      status: 'cached',
      cachedFrom: committed.report.run.id,
    });
  });

  test('a new untracked module is code too', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('features.py', 'X = 1\n');
    const { report } = await run();
    expect(report.run.dirty).toBe(true);
    // It could shadow an import of train's: the import system listed the folder.
    expect(stageOf(report, 'train')).toMatchObject({
      status: 'ran',
      reasons: ["modules added to or removed from the pipeline's folder"],
    });
    expect(stageOf(report, 'prepare').status).toBe('cached');
  });

  test('bytecode, ignored files and .fluksio/ never count as code', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('__pycache__/helpers.cpython-311.pyc', 'bytes');
    await repo.write('notes.pyc', 'bytes');
    await repo.write('data/scratch.txt', 'ignored by .gitignore');
    const { report } = await run();
    expect(report.run.dirty).toBe(false);
    expect(statuses(report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
  });

  test('a module another stage lists as its dep re-runs both that stage and the one importing it', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('shared.py', 'OFFSET = 2.0\n');
    const { report } = await run();
    expect(stageOf(report, 'evaluate')).toMatchObject({ status: 'ran', reasons: ['shared.py changed'] });
    expect(stageOf(report, 'train')).toMatchObject({ status: 'ran', reasons: ['shared.py changed'] });
    expect(stageOf(report, 'prepare').status).toBe('cached');
  });

  test("a dep's content re-runs its stage and the stages downstream; a touched mtime alone changes nothing", async () => {
    repo = await makeMlProject();
    await run();
    const future = new Date(Date.now() + 3_600_000);
    await utimes(join(repo.dir, 'raw.csv'), future, future);
    const touched = await run();
    expect(statuses(touched.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });

    await repo.write('raw.csv', '1\n2\n3\n5\n');
    const { report } = await run();
    expect(stageOf(report, 'prepare')).toMatchObject({ status: 'ran', reasons: ['raw.csv changed'] });
    // train never reads raw.csv: only its dep made from it changed.
    expect(stageOf(report, 'train')).toMatchObject({
      status: 'ran',
      reasons: ['data/clean.csv changed (upstream prepare re-ran)'],
    });
  });

  test('an upstream out that comes out the same leaves the downstream cached', async () => {
    repo = await makeMlProject();
    // train's code is only what it imports, so prepare.py is not in its scope.
    const pipeline = await readFile(join(repo.dir, 'fluksio.yml'), 'utf8');
    await repo.write(
      'fluksio.yml',
      pipeline.replace(
        '    outs: [model.txt]\n',
        '    outs: [model.txt]\n    code: [helpers.py, shared.py]\n',
      ),
    );
    await repo.commitAll('narrow code scope');
    await run();
    // prepare.py changes but writes the same data: prepare re-runs, train does not.
    await repo.write('prepare.py', `${await readFile(join(repo.dir, 'prepare.py'), 'utf8')}# comment\n`);
    const { report } = await run();
    expect(stageOf(report, 'prepare')).toMatchObject({ status: 'ran', reasons: ['prepare.py changed'] });
    expect(stageOf(report, 'train').status).toBe('cached');
  });

  test('a param re-runs only the stages that list it and their dependents', async () => {
    repo = await makeMlProject();
    const first = await run(['lr=0.01']);
    const { report } = await run(['lr=0.1']);
    expect(stageOf(report, 'prepare').status).toBe('cached');
    expect(stageOf(report, 'train')).toMatchObject({ status: 'ran', reasons: ['lr 0.01 → 0.1'] });
    expect(stageOf(report, 'evaluate')).toMatchObject({
      status: 'ran',
      reasons: ['model.txt changed (upstream train re-ran)'],
    });
    expect(report.baseline).toEqual({ id: first.report.run.id, commit: first.report.run.commit });
    expect(report.diff.find((row) => row.name === 'loss')).toMatchObject({
      baseline: first.report.metrics.loss,
      value: report.metrics.loss,
    });
  });

  test('an env value re-runs every stage, saying which variable changed', async () => {
    repo = await makeMlProject();
    await run();
    const { report } = await run([], { DEVICE: 'gpu' });
    for (const stage of report.stages) {
      expect(stage).toMatchObject({ status: 'ran', reasons: expect.arrayContaining(['env DEVICE changed']) });
    }
  });

  test('the fingerprint output re-runs every stage', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('.toolchain', 'python 3.12\n');
    const { report } = await run();
    expect(report.run.dirty).toBe(false);
    for (const stage of report.stages) {
      expect(stage).toMatchObject({
        status: 'ran',
        reasons: expect.arrayContaining(['fingerprint output changed']),
      });
    }
  });

  test('a code: false stage with unchanged deps stays cached whatever else changes', async () => {
    repo = await makeMlProject();
    await run();
    await repo.write('helpers.py', 'def scale(x):\n    return 0\n');
    await repo.write('README.md', '# new\n');
    await repo.commitAll('code elsewhere');
    const { report } = await run();
    expect(stageOf(report, 'prepare').status).toBe('cached');
    expect(stageOf(report, 'train').status).toBe('ran');
  });

  test('--no-cache runs everything and still writes the cache', async () => {
    repo = await makeMlProject();
    await run();
    const forced = await run(['--no-cache']);
    expect(statuses(forced.report)).toEqual({ prepare: 'ran', train: 'ran', evaluate: 'ran' });
    expect(stageOf(forced.report, 'train').reasons).toEqual(['--no-cache']);
    const after = await run();
    for (const stage of after.report.stages) expect(stage.cachedFrom).toBe(forced.report.run.id);
  });
});
