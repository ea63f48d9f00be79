import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { makeRepo } from '../helpers/make-repo.js';
import { runJson, statuses } from '../helpers/run-cli.js';

// A params.yaml as ML engineers write them: shared values under an anchor, reused with an
// alias or a `<<` merge key, which Python's yaml.safe_load (what the stage reads) expands.

test('a param whose value is an alias keys its stage by the anchored value: the anchor changed, the stage re-runs', async () => {
  const project = await makeRepo({
    files: {
      'params.yaml': 'defaults:\n  lr: &lr 0.1\ntrain:\n  lr: *lr\n  epochs: 2\n',
      'dvc.yaml': [
        'stages:',
        '  train:',
        '    cmd: python3 train.py ${train.lr}',
        '    deps: [train.py]',
        '    params: [train.lr]',
        '    outs: [model.txt]',
        '',
      ].join('\n'),
      // Takes lr from its command only: params.yaml is never read, so only the key says lr.
      'train.py': 'import sys\nopen("model.txt", "w").write(" ".join(sys.argv[1:]))\n',
    },
  });
  try {
    const first = await runJson([], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.run.params).toEqual({ 'train.lr': 0.1 });
    expect(readFileSync(join(project.dir, 'model.txt'), 'utf8')).toBe('0.1');

    await project.write('params.yaml', 'defaults:\n  lr: &lr 0.5\ntrain:\n  lr: *lr\n  epochs: 2\n');
    await project.commitAll('lr 0.5');
    const second = await runJson([], { cwd: project.dir });
    expect(second.code, second.stderr).toBe(0);
    expect(statuses(second.report)).toEqual({ train: 'ran' });
    expect(second.report.run.params).toEqual({ 'train.lr': 0.5 });
    expect(readFileSync(join(project.dir, 'model.txt'), 'utf8')).toBe('0.5');
  } finally {
    await project.cleanup();
  }
});

test('a param a << merge key brings in is the merged value: its source changed, the stage re-runs; set, the stage reads it', async () => {
  const paramsYaml =
    'base: &base\n  lr: 0.1\n  opt: {name: sgd, momentum: 0.9}\ntrain:\n  <<: *base\n  epochs: 2\n';
  const project = await makeRepo({
    files: {
      'params.yaml': paramsYaml,
      'dvc.yaml': [
        'stages:',
        '  train:',
        '    cmd: python3 train.py ${train.epochs}',
        '    deps: [train.py]',
        '    params: [train.lr, train.opt.momentum]',
        '    outs: [model.txt]',
        '',
      ].join('\n'),
      'train.py': [
        'import sys, yaml',
        'p = yaml.safe_load(open("params.yaml"))["train"]',
        'open("model.txt", "w").write("%s %s %s" % (p["lr"], p["opt"]["momentum"], " ".join(sys.argv[1:])))',
        '',
      ].join('\n'),
    },
  });
  try {
    const first = await runJson([], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.run.params).toEqual({
      'train.epochs': 2,
      'train.lr': 0.1,
      'train.opt.momentum': 0.9,
    });
    expect(readFileSync(join(project.dir, 'model.txt'), 'utf8')).toBe('0.1 0.9 2');

    await project.write('params.yaml', paramsYaml.replace('lr: 0.1', 'lr: 0.5'));
    await project.commitAll('lr 0.5');
    const second = await runJson([], { cwd: project.dir });
    expect(second.code, second.stderr).toBe(0);
    expect(statuses(second.report)).toEqual({ train: 'ran' });
    expect(second.report.run.params).toMatchObject({ 'train.lr': 0.5 });
    expect(readFileSync(join(project.dir, 'model.txt'), 'utf8')).toBe('0.5 0.9 2');

    // As dvc exp run -S: the stage finds the run's values in params.yaml, though train
    // holds neither itself; base (and so every other user of it) is left as it is.
    const set = await runJson(['train.lr=0.7', 'train.opt.momentum=0.5'], { cwd: project.dir });
    expect(set.code, set.stderr).toBe(0);
    expect(statuses(set.report)).toEqual({ train: 'ran' });
    expect(readFileSync(join(project.dir, 'model.txt'), 'utf8')).toBe('0.7 0.5 2');
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe(
      paramsYaml.replace('lr: 0.1', 'lr: 0.5'),
    );
  } finally {
    await project.cleanup();
  }
});

test('a stage with a wdir reads its params from the params.yaml there, as DVC does: keyed on it, and a run’s value set in it', async () => {
  const project = await makeRepo({
    files: {
      // params.yaml beside dvc.yaml is what ${…} sees; the stage's own is sub/params.yaml.
      'params.yaml': 'lr: 0.1\n',
      'sub/params.yaml': 'lr: 0.2\n',
      'dvc.yaml': [
        'stages:',
        '  train:',
        '    wdir: sub',
        '    cmd: python3 train.py',
        '    deps: [train.py]',
        '    params: [lr]',
        '    outs: [model.txt]',
        '',
      ].join('\n'),
      'sub/train.py': [
        'import yaml',
        'open("model.txt", "w").write(str(yaml.safe_load(open("params.yaml"))["lr"]))',
        '',
      ].join('\n'),
    },
  });
  try {
    const first = await runJson([], { cwd: project.dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.run.params).toEqual({ 'sub/params.yaml:lr': 0.2 });
    expect(readFileSync(join(project.dir, 'sub/model.txt'), 'utf8')).toBe('0.2');

    const set = await runJson(['sub/params.yaml:lr=0.9'], { cwd: project.dir });
    expect(set.code, set.stderr).toBe(0);
    expect(statuses(set.report)).toEqual({ train: 'ran' });
    expect(readFileSync(join(project.dir, 'sub/model.txt'), 'utf8')).toBe('0.9');
    expect(readFileSync(join(project.dir, 'sub/params.yaml'), 'utf8')).toBe('lr: 0.2\n');
  } finally {
    await project.cleanup();
  }
});
