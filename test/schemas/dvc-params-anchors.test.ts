import { expect, test } from 'vitest';
import { overlayDvcParams } from '../../core/dvc/dvc-params-overlay.js';
import { parseDvcParamsFile } from '../../core/dvc/dvc-params.js';
import { translateDvc } from '../../core/dvc/translate-dvc.js';

// What Python's yaml.safe_load gives for each file is what a stage reading it sees, so it is
// what the stage's params (and so its cache key) must say.
test.each([
  {
    rule: 'an alias has its anchor’s value',
    yaml: 'defaults:\n  lr: &lr 0.1\ntrain:\n  lr: *lr\n',
    data: { defaults: { lr: 0.1 }, train: { lr: 0.1 } },
    floats: ['defaults.lr', 'train.lr'],
  },
  {
    rule: 'a << merge key brings in its mapping’s keys; the mapping’s own keys win, wherever they are',
    yaml: 'base: &base {lr: 0.1, epochs: 1}\ntrain:\n  epochs: 2\n  <<: *base\n',
    data: { base: { lr: 0.1, epochs: 1 }, train: { lr: 0.1, epochs: 2 } },
    floats: ['base.lr', 'train.lr'],
  },
  {
    rule: 'merging a list of mappings, an earlier one wins; whether a number is a float follows the value taken',
    yaml: 'a: &a {lr: 1.0, x: 1}\nb: &b {lr: 2, y: 2.0}\nc:\n  <<: [*a, *b]\n  x: 3\n',
    data: { a: { lr: 1, x: 1 }, b: { lr: 2, y: 2 }, c: { lr: 1, x: 3, y: 2 } },
    floats: ['a.lr', 'b.y', 'c.lr', 'c.y'],
  },
  {
    rule: 'merged mappings merge in turn, and aliases inside lists are followed',
    yaml: 'a: &a {lr: 0.1}\nb: &b {<<: *a, depth: 3}\nc: {<<: *b}\nd: [*a, *b]\n',
    data: {
      a: { lr: 0.1 },
      b: { lr: 0.1, depth: 3 },
      c: { lr: 0.1, depth: 3 },
      d: [{ lr: 0.1 }, { lr: 0.1, depth: 3 }],
    },
    floats: ['a.lr', 'b.lr', 'c.lr', 'd[0].lr', 'd[1].lr'],
  },
  {
    rule: 'a quoted "<<" is a key like any other',
    yaml: '"<<": 1\n',
    data: { '<<': 1 },
    floats: [],
  },
])('$rule', ({ yaml, data, floats }) => {
  const parsed = parseDvcParamsFile(yaml);
  expect(parsed.data).toEqual(data);
  expect([...parsed.floats].sort()).toEqual(floats);
});

test.each([
  { yaml: 'a: &a [*a]\n', message: 'an alias names a value that contains it' },
  { yaml: 'a: &a {<<: *a}\n', message: 'an alias names a value that contains it' },
  { yaml: 'a: &a 1\nb: {<<: *a}\n', message: 'a << merge key must name a mapping or a list of mappings' },
  { yaml: 'a: 1\nb: {<<: *nope}\n', message: 'alias *nope names no anchor before it' },
  {
    yaml: [
      'a: &a [1, 2]',
      ...'bcdef'
        .split('')
        .map((name, index) => `${name}: &${name} [${Array(10).fill(`*${'abcdef'[index]}`).join(', ')}]`),
      '',
    ].join('\n'),
    message: 'its aliases expand to more than 100000 values',
  },
])('a params file whose aliases cannot be expanded is refused: $message', ({ yaml, message }) => {
  expect(() => parseDvcParamsFile(yaml)).toThrow(message);
});

test('a run’s value of a param the file holds through an alias or a merge key is written where the stage reads it, sharing nothing', () => {
  const float = { type: 'float', default: 0 } as const;
  const shared = 'base: &base\n  lr: 0.1\n  opt: {m: 0.9, n: sgd}\ntrain: *base\nlate: *base\n';
  expect(overlayDvcParams(shared, [{ path: ['train', 'opt', 'm'], value: 0.5, spec: float }])).toBe(
    'base: &base\n  lr: 0.1\n  opt: { m: 0.9, n: sgd }\ntrain:\n  lr: 0.1\n  opt: { m: 0.5, n: sgd }\nlate: *base\n',
  );
  const merged = 'a: &a {lr: 1.0, x: 1}\nb: &b {lr: 2, y: 2}\nc:\n  <<: [*a, *b]\n  x: 3\n';
  const written = overlayDvcParams(merged, [
    { path: ['c', 'lr'], value: 1, spec: float },
    { path: ['c', 'y'], value: 5, spec: undefined },
  ]);
  expect(written).toBe(
    'a: &a { lr: 1.0, x: 1 }\nb: &b { lr: 2, y: 2 }\nc:\n  <<: [ *a, *b ]\n  x: 3\n  y: 5\n',
  );
  expect(parseDvcParamsFile(written ?? '').data).toMatchObject({
    a: { lr: 1 },
    b: { y: 2 },
    c: { lr: 1, y: 5 },
  });
  // The anchored value itself, set: its anchor stays, so its aliases still resolve (to it).
  const scalar = 'defaults:\n  lr: &lr 0.1\ntrain:\n  lr: *lr\n';
  expect(overlayDvcParams(scalar, [{ path: ['defaults', 'lr'], value: 2, spec: float }])).toBe(
    'defaults:\n  lr: &lr 2.0\ntrain:\n  lr: *lr\n',
  );
  expect(overlayDvcParams(scalar, [{ path: ['train', 'lr'], value: 2, spec: float }])).toBe(
    'defaults:\n  lr: &lr 0.1\ntrain:\n  lr: 2.0\n',
  );
  expect(overlayDvcParams(scalar, [{ path: ['train', 'lr'], value: 0.1, spec: float }])).toBeNull();
});

test('a stage listing an alias before its anchor reads each at the run’s value, whatever the order they are listed in', () => {
  const float = { type: 'float', default: 0 } as const;
  const scalar = 'defaults:\n  lr: &lr 0.1\ntrain:\n  lr: *lr\n';
  // `fluksio run defaults.lr=2` for a stage with `params: [train.lr, defaults.lr]`: the run's
  // train.lr is still the file's 0.1, which its key records and the stage must read.
  const written = overlayDvcParams(scalar, [
    { path: ['train', 'lr'], value: 0.1, spec: float },
    { path: ['defaults', 'lr'], value: 2, spec: float },
  ]);
  expect(parseDvcParamsFile(written ?? scalar).data).toEqual({ defaults: { lr: 2 }, train: { lr: 0.1 } });
});

test('a dvc.yaml and its params files may use anchors and merge keys: stages, ${…} and params see the merged values', () => {
  const dvcYaml = [
    'vars: [other.yaml]',
    'stages:',
    '  prepare: &common',
    '    cmd: python3 prepare.py',
    '    deps: [train.py]',
    '  train:',
    '    <<: *common',
    '    cmd: python3 train.py ${train.lr} ${extra.depth}',
    '    params: [train, {other.yaml: [extra.depth]}]',
    '',
  ].join('\n');
  const files: Record<string, string> = {
    'params.yaml': 'base: &base\n  lr: 0.1\ntrain:\n  <<: *base\n  epochs: 2\n',
    'other.yaml': 'shared: &shared {depth: 3}\nextra: {<<: *shared}\n',
  };
  const { pipeline, problems } = translateDvc({
    dvcYaml,
    pipelineDir: '',
    readFile: (path) => files[path],
  });
  expect(problems).toEqual([]);
  expect(pipeline?.stages.train).toMatchObject({
    cmd: 'python3 train.py ${train.lr} 3',
    deps: ['train.py'],
    params: ['train.lr', 'train.epochs', 'other.yaml:extra.depth'],
  });
  expect(pipeline?.params).toEqual({
    'other.yaml:extra.depth': { type: 'int', default: 3 },
    'train.epochs': { type: 'int', default: 2 },
    'train.lr': { type: 'float', default: 0.1 },
  });
});
