import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { committedFiles } from '../helpers/committed-files.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/dvc-get-started');

/** examples/dvc-get-started as committed: dvc.yaml, params.yaml, data, scripts; nothing it makes. */
function exampleFiles(): Record<string, string> {
  return committedFiles(EXAMPLE);
}

let repo: TestRepo;
beforeAll(async () => {
  repo = await makeRepo({ files: exampleFiles() });
});
afterAll(async () => {
  await repo.cleanup();
});

test('a DVC project of the get-started shape runs unchanged, and a DVC-named param re-runs only what reads it', async () => {
  const first = await runJson([], { cwd: repo.dir });
  expect(first.code, first.stderr).toBe(0);
  expect(statuses(first.report)).toEqual({ prepare: 'ran', featurize: 'ran', train: 'ran', evaluate: 'ran' });
  expect(first.report.run.params).toMatchObject({ 'featurize.max_features': 100, 'prepare.split': 0.2 });
  expect(Object.keys(first.report.metrics).sort()).toEqual(['avg_prec', 'roc_auc']);
  expect(existsSync(join(repo.dir, 'eval/plots/roc.json'))).toBe(true);
  // The ROC and precision-recall plot files are the run's series (x fpr, y tpr: both kept, by row).
  const shown = await runCli(['show', first.report.run.id, '--json'], { cwd: repo.dir });
  const series = (
    JSON.parse(shown.stdout) as { series: Record<string, { stage: string; points: unknown[] }> }
  ).series;
  expect(Object.keys(series).sort()).toEqual([
    'eval/plots/prc/precision',
    'eval/plots/prc/recall',
    'eval/plots/roc/fpr',
    'eval/plots/roc/tpr',
  ]);
  expect(series['eval/plots/roc/tpr']?.stage).toBe('evaluate');
  expect(series['eval/plots/roc/tpr']?.points.length).toBe(series['eval/plots/roc/fpr']?.points.length);
  expect(series['eval/plots/roc/tpr']?.points.at(-1)).toEqual({ step: expect.any(Number), value: 1 });

  const changed = await runJson(['featurize.max_features=400'], { cwd: repo.dir });
  expect(changed.code, changed.stderr).toBe(0);
  expect(statuses(changed.report)).toEqual({
    prepare: 'cached',
    featurize: 'ran',
    train: 'ran',
    evaluate: 'ran',
  });
  expect(changed.report.run.params).toMatchObject({ 'featurize.max_features': 400 });

  const typed = await runCli(['run', 'featurize.max_features=many'], { cwd: repo.dir });
  expect(typed.code).toBe(2);
  expect(typed.stderr).toMatch(/Parameter 'featurize.max_features': "many" is not an int/);

  // DVC's own state is neither needed nor touched.
  expect(existsSync(join(repo.dir, '.dvc'))).toBe(false);
  expect(await repo.git('status', '--porcelain', '--', 'dvc.yaml', 'params.yaml')).toBe('');
});

test('foreach and matrix stages run under the names DVC gives them; a remote out is named and the rest runs', async () => {
  const grid = await makeRepo({
    files: {
      'dvc.yaml': [
        'stages:',
        '  train:',
        '    foreach: [small, large]',
        '    do:',
        '      cmd: mkdir -p models && echo ${item} > models/${item}.txt',
        '      outs:',
        '        - models/${item}.txt',
        '  stage:',
        '    matrix:',
        '      a: [0, 1]',
        '      b: [1]',
        '    cmd: echo ${item.a}${item.b} > grid-${item.a}-${item.b}.txt',
        '    outs:',
        '      - grid-${item.a}-${item.b}.txt',
        '  upload:',
        '    cmd: aws s3 cp models s3://bucket/models --recursive',
        '    deps:',
        '      - models/small.txt',
        '    outs:',
        '      - s3://bucket/models',
        '',
      ].join('\n'),
    },
  });
  try {
    const result = await runJson([], { cwd: grid.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(statuses(result.report)).toEqual({
      'train@small': 'ran',
      'train@large': 'ran',
      'stage@0-1': 'ran',
      'stage@1-1': 'ran',
    });
    expect(result.stderr).toMatch(/not honoured: stage upload: cannot be honoured \(s3:\/\/bucket\/models/);
    expect(readFileSync(join(grid.dir, 'models/large.txt'), 'utf8')).toBe('large\n');
    expect(readFileSync(join(grid.dir, 'grid-1-1.txt'), 'utf8')).toBe('11\n');
  } finally {
    await grid.cleanup();
  }
});

test('a stage that reads params.yaml itself sees the run’s value, and the file is put back as it was', async () => {
  const paramsYaml = [
    '# the team’s defaults',
    'featurize:',
    '  max_features: 100 # how many terms',
    '  ngrams: 1',
    'train:',
    '  lr: 0.5',
    '',
  ].join('\n');
  const project = await makeRepo({
    files: {
      'params.yaml': paramsYaml,
      'dvc.yaml': [
        'stages:',
        '  featurize:',
        '    cmd: >-',
        '      echo "{\\"max_features\\": $(sed -n \'s/^ *max_features: *\\([0-9]*\\).*/\\1/p\' params.yaml),',
        '      \\"lr\\": $(sed -n \'s/^ *lr: *//p\' params.yaml)}" > metrics.json',
        '    params:',
        '      - featurize.max_features',
        '      - train.lr',
        '    metrics:',
        '      - metrics.json:',
        '          cache: false',
        '',
      ].join('\n'),
    },
  });
  try {
    const first = await runJson([], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.metrics).toMatchObject({ max_features: 100, lr: 0.5 });

    const changed = await runJson(['featurize.max_features=400', 'train.lr=1'], { cwd: project.dir });
    expect(changed.code, changed.stderr).toBe(0);
    expect(statuses(changed.report)).toEqual({ featurize: 'ran' });
    expect(changed.report.metrics).toMatchObject({ max_features: 400, lr: 1 });
    // Byte for byte as committed: comments, layout and the values.
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe(paramsYaml);
    expect(await project.git('status', '--porcelain')).not.toMatch(/params\.yaml|dvc\.yaml/);

    const again = await runJson([], { cwd: project.dir });
    expect(again.code, again.stderr).toBe(0);
    expect(statuses(again.report)).toEqual({ featurize: 'cached' });
    expect(again.report.metrics).toMatchObject({ max_features: 100, lr: 0.5 });
  } finally {
    await project.cleanup();
  }
});

test('a stage that lists no param never sees another stage’s values in params.yaml, even with -j 2', async () => {
  // `a` gets lr=0.5 written into params.yaml while it runs; `b` reads the file as a dep at
  // the same moment it could have: it must read the committed value.
  const project = await makeRepo({
    files: {
      'params.yaml': 'lr: 0.1\n',
      '.gitignore': 'a.txt\nb.txt\n',
      'dvc.yaml': [
        'stages:',
        '  a:',
        '    cmd: sleep 1 && cat params.yaml > a.txt',
        '    params: [lr]',
        '    outs: [a.txt]',
        '  b:',
        '    cmd: sleep 1 && cat params.yaml > b.txt',
        '    deps: [params.yaml]',
        '    outs: [b.txt]',
        '',
      ].join('\n'),
    },
  });
  try {
    const result = await runCli(['run', '--pipeline', 'dvc.yaml', '--jobs', '2', 'lr=0.5'], {
      cwd: project.dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(project.dir, 'a.txt'), 'utf8')).toBe('lr: 0.5\n');
    expect(readFileSync(join(project.dir, 'b.txt'), 'utf8')).toBe('lr: 0.1\n');
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe('lr: 0.1\n');
  } finally {
    await project.cleanup();
  }
});

test('a traced Python stage that reads params.yaml itself is cached under the run’s value, and found again', async () => {
  const project = await makeRepo({
    files: {
      '.gitignore': '/model.txt\n',
      'params.yaml': 'train:\n  lr: 0.5 # the team’s default\n  epochs: 3\n',
      'dvc.yaml':
        'stages:\n  train:\n    cmd: python3 train.py\n    params: [train.lr]\n    outs: [model.txt]\n',
      // As DVC's get-started scripts do: the values come from params.yaml, not the command line.
      'train.py': [
        'import re',
        'text = open("params.yaml").read()',
        'lr = re.search(r"lr: *([0-9.]+)", text).group(1)',
        'epochs = re.search(r"epochs: *([0-9]+)", text).group(1)',
        'open("model.txt", "w").write(f"lr={lr} epochs={epochs}\\n")',
        '',
      ].join('\n'),
    },
  });
  try {
    const model = () => readFileSync(join(project.dir, 'model.txt'), 'utf8');
    const plain = await runJson([], { cwd: project.dir });
    expect(plain.code, plain.stderr).toBe(0);
    expect(model()).toBe('lr=0.5 epochs=3\n');

    const changed = await runJson(['train.lr=0.1'], { cwd: project.dir });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.report.stages[0]).toMatchObject({
      status: 'ran',
      notes: [expect.stringMatching(/read params\.yaml/)],
    });
    expect(model()).toBe('lr=0.1 epochs=3\n');
    const again = await runJson(['train.lr=0.1'], { cwd: project.dir });
    expect(again.report.stages[0]).toMatchObject({ status: 'cached', cachedFrom: changed.report.run.id });
    expect(model()).toBe('lr=0.1 epochs=3\n');

    const back = await runJson([], { cwd: project.dir });
    expect(back.report.stages[0]).toMatchObject({ status: 'cached', cachedFrom: plain.report.run.id });
    expect(model()).toBe('lr=0.5 epochs=3\n');
    // A key the stage does not list, read all the same: it re-runs, and the override's entry is not taken.
    await project.write('params.yaml', 'train:\n  lr: 0.5 # the team’s default\n  epochs: 4\n');
    const epochs = await runJson(['train.lr=0.1'], { cwd: project.dir });
    expect(epochs.report.stages[0]).toMatchObject({
      status: 'ran',
      reasons: expect.arrayContaining(['params.yaml changed']),
    });
    expect(model()).toBe('lr=0.1 epochs=4\n');
  } finally {
    await project.cleanup();
  }
});

test('a traced stage whose params.yaml is edited while it runs with a run’s value is not cached', async () => {
  const project = await makeRepo({
    files: {
      '.gitignore': '/model.txt\n',
      'params.yaml': 'lr: 0.1\nepochs: 3\n',
      'edited.yaml': 'lr: 0.1\nepochs: 9\n',
      'dvc.yaml': 'stages:\n  train:\n    cmd: python3 train.py\n    params: [lr]\n    outs: [model.txt]\n',
      // Reads its values, then the file is edited (as by its user) before the stage ends.
      'train.py': [
        'import shutil',
        'open("model.txt", "w").write(open("params.yaml").read())',
        'shutil.copyfile("edited.yaml", "params.yaml")',
        '',
      ].join('\n'),
    },
  });
  try {
    const model = () => readFileSync(join(project.dir, 'model.txt'), 'utf8');
    const first = await runJson(['lr=0.5'], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(model()).toBe('lr: 0.5\nepochs: 3\n');
    expect(first.report.stages[0]?.notes).toContainEqual(expect.stringMatching(/not cached: params\.yaml/));
    const second = await runJson(['lr=0.5'], { cwd: project.dir });
    expect(second.report.stages[0]?.status).toBe('ran');
    expect(model()).toBe('lr: 0.5\nepochs: 9\n');
  } finally {
    await project.cleanup();
  }
});
