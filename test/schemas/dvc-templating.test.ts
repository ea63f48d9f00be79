import { describe, expect, test } from 'vitest';
import { translateDvc, type DvcTranslation } from '../../core/dvc/translate-dvc.js';
import { interpolateCommand } from '../../core/pipeline/interpolate-command.js';

const PARAMS = `prepare:
  split: 0.2
featurize:
  max_features: 100
  ngrams: 1
train:
  n_est: 50
  min_split: 0.01
  scale: 1.0
  name: "forest one"
  warm: true
  layers: [8, 4]
`;

function translate(dvcYaml: string, files: Record<string, string> = {}): DvcTranslation {
  const all: Record<string, string> = { 'params.yaml': PARAMS, ...files };
  return translateDvc({ dvcYaml, pipelineDir: '', readFile: (path) => all[path] });
}

/** Each row: a DVC templating rule, a dvc.yaml using it, and what fluksio's pipeline holds. */
const rules: {
  rule: string;
  dvc: string;
  files?: Record<string, string>;
  stages: Record<string, object>;
  params?: Record<string, object>;
}[] = [
  {
    rule: 'vars and ${a.b[0]} (and ${a.b.0}) look up nested values',
    dvc: `vars:\n  - data: { dirs: [raw, clean] }\nstages:\n  s:\n    cmd: cp \${data.dirs[0]}/x \${data.dirs.1}/x\n    deps: ['\${data.dirs[0]}/x']\n    outs: ['\${data.dirs.1}/x']\n`,
    stages: { s: { cmd: 'cp raw/x clean/x', deps: ['raw/x'], outs: ['clean/x'] } },
  },
  {
    rule: 'vars from a file, only the keys named after ":"',
    dvc: `vars:\n  - conf.yaml:a\nstages:\n  s:\n    cmd: echo \${a}\n`,
    files: { 'conf.yaml': 'a: 1\nb: 2\n' },
    stages: { s: { cmd: 'echo 1', params: [] } },
  },
  {
    rule: '\\${ is a literal ${ (in cmd, the shell expansion $NAME)',
    dvc: `stages:\n  s:\n    cmd: echo \\\${HOME} \\\${USER}x\n    desc: costs \\\${money}\n`,
    stages: { s: { cmd: 'echo $HOME $USER""x' } },
  },
  {
    rule: 'a lone expression keeps its type (a list stays a list)',
    dvc: `vars:\n  - inputs: [a.csv, b.csv]\nstages:\n  s:\n    cmd: cat a.csv b.csv\n    deps: \${inputs}\n`,
    stages: { s: { deps: ['a.csv', 'b.csv'] } },
  },
  {
    rule: 'a dict in cmd expands to --key value (true as a flag, false left out, lists spread, nested keys dotted)',
    dvc: `vars:\n  - opts: { lr: 0.1, name: two words, fast: true, slow: false, sizes: [1, 2], adam: { beta: 0.9 } }\nstages:\n  s:\n    cmd: python3 t.py \${opts}\n`,
    stages: { s: { cmd: "python3 t.py --lr 0.1 --name 'two words' --fast --sizes 1 2 --adam.beta 0.9" } },
  },
  {
    rule: 'a params.yaml dict in cmd expands to flags whose values the run sets',
    dvc: `stages:\n  s:\n    cmd: python3 t.py \${featurize}\n`,
    stages: {
      s: {
        cmd: 'python3 t.py --max_features ${featurize.max_features} --ngrams ${featurize.ngrams}',
        params: ['featurize.max_features', 'featurize.ngrams'],
      },
    },
  },
  {
    rule: 'params are named as DVC names them and typed from params.yaml (1.0 is a float)',
    dvc: `stages:\n  s:\n    cmd: python3 t.py \${train.n_est} \${train.layers}\n    params: [train]\n`,
    stages: { s: { cmd: 'python3 t.py ${train.n_est} 8 4' } },
    params: {
      'train.n_est': { type: 'int', default: 50 },
      'train.min_split': { type: 'float', default: 0.01 },
      'train.scale': { type: 'float', default: 1 },
      'train.name': { type: 'string', default: 'forest one' },
      'train.warm': { type: 'bool', default: true },
      'train.layers': { type: 'string', default: '[8,4]' },
    },
  },
  {
    rule: 'params: {file: [keys]} names a key of another file as file:key',
    dvc: `stages:\n  s:\n    cmd: python3 t.py\n    params: [prepare.split, {custom.yaml: [lr]}]\n`,
    files: { 'custom.yaml': 'lr: 0.5\n' },
    stages: { s: { params: ['prepare.split', 'custom.yaml:lr'] } },
    params: { 'custom.yaml:lr': { type: 'float', default: 0.5 }, 'prepare.split': { type: 'float' } },
  },
  {
    rule: 'foreach over a list of scalars names stages by value, ${item}',
    dvc: `stages:\n  train:\n    foreach: [small, large]\n    do:\n      cmd: python3 t.py \${item}\n      outs: ['model-\${item}.pkl']\n`,
    stages: {
      'train@small': { cmd: 'python3 t.py small', outs: ['model-small.pkl'] },
      'train@large': { cmd: 'python3 t.py large' },
    },
  },
  {
    rule: 'foreach over a dictionary names stages by key, ${key} and ${item.x}',
    dvc: `stages:\n  build:\n    foreach:\n      uk: { epochs: 3 }\n      us: { epochs: 10 }\n    do:\n      cmd: python3 t.py \${key} \${item.epochs}\n`,
    stages: { 'build@uk': { cmd: 'python3 t.py uk 3' }, 'build@us': { cmd: 'python3 t.py us 10' } },
  },
  {
    rule: 'foreach over a list of dictionaries names stages by index',
    dvc: `vars:\n  - runs: [{ n: 1 }, { n: 2 }]\nstages:\n  fit:\n    foreach: \${runs}\n    do:\n      cmd: echo \${item.n}\n`,
    stages: { 'fit@0': { cmd: 'echo 1' }, 'fit@1': { cmd: 'echo 2' } },
  },
  {
    rule: 'matrix makes every combination, named by values joined with -',
    dvc: `stages:\n  stage:\n    matrix:\n      a: [0, 1]\n      b: [1]\n    cmd: echo \${item.a} \${item.b}\n`,
    stages: { 'stage@0-1': { cmd: 'echo 0 1' }, 'stage@1-1': { cmd: 'echo 1 1' } },
  },
  {
    rule: 'matrix names a list or dict value by its key and index',
    dvc: `stages:\n  s:\n    matrix:\n      os: [linux]\n      cfg: [{ x: 1 }, [2, 3]]\n    cmd: echo \${item.os}\n`,
    stages: { 's@linux-cfg0': { cmd: 'echo linux' }, 's@linux-cfg1': { cmd: 'echo linux' } },
  },
  {
    rule: 'cmd as a list runs each in turn; wdir moves the command and the paths',
    dvc: `stages:\n  s:\n    wdir: sub\n    cmd: [python3 a.py, python3 b.py]\n    deps: [a.py]\n    outs: [../out.txt]\n`,
    stages: {
      s: { cmd: 'cd sub && { python3 a.py && python3 b.py; }', deps: ['sub/a.py'], outs: ['out.txt'] },
    },
  },
  {
    rule: 'always_changed and persist never take the stage from the cache; metrics and plots are kept',
    dvc: `stages:\n  a:\n    cmd: date > t\n    always_changed: true\n    outs: [t]\n  b:\n    cmd: echo >> log\n    outs: [{ log: { persist: true, cache: false } }]\n    metrics: [{ m.json: { cache: false } }]\n    plots: [roc.json]\n`,
    stages: { a: { cache: false }, b: { cache: false, outs: ['log', 'roc.json'], metrics: ['m.json'] } },
  },
];

describe('dvc.yaml templating, as DVC resolves it', () => {
  test.each(rules)('$rule', ({ dvc, files, stages, params }) => {
    const { pipeline, problems } = translate(dvc, files);
    expect(problems).toEqual([]);
    expect(Object.keys(pipeline?.stages ?? {})).toEqual(Object.keys(stages));
    expect(pipeline?.stages).toMatchObject(stages);
    if (params) expect(pipeline?.params).toMatchObject(params);
  });

  test('a param reaches the command with the value the run sets, quoted', () => {
    const { pipeline } = translate(
      `stages:\n  s:\n    cmd: python3 t.py --name \${train.name} --n \${train.n_est}\n`,
    );
    const cmd = pipeline?.stages.s?.cmd ?? '';
    expect(interpolateCommand(cmd, { 'train.name': 'a b', 'train.n_est': 400 })).toBe(
      "python3 t.py --name 'a b' --n 400",
    );
  });
});

describe('what a dvc.yaml gets wrong is named with its stage and field', () => {
  const cases: { rule: string; dvc: string; problem: { path: string; message: RegExp } }[] = [
    {
      rule: 'an undefined reference',
      dvc: `stages:\n  s:\n    cmd: echo \${nope.x}\n`,
      problem: { path: 'stages.s.cmd', message: /"nope" is not defined/ },
    },
    {
      rule: 'a dictionary inside other text outside cmd',
      dvc: `stages:\n  s:\n    cmd: echo\n    outs: ['x-\${train}']\n`,
      problem: { path: 'stages.s.outs', message: /dictionary; only cmd/ },
    },
    {
      rule: 'a name defined twice',
      dvc: `vars:\n  - train: 1\nstages:\n  s:\n    cmd: echo\n`,
      problem: { path: 'vars[0]', message: /cannot redefine "train"/ },
    },
    {
      rule: 'a params key params.yaml lacks',
      dvc: `stages:\n  s:\n    cmd: echo\n    params: [train.nope]\n`,
      problem: { path: 'stages.s.params[0]', message: /"train.nope" is not in params.yaml/ },
    },
    {
      rule: 'an unknown field of a generated stage',
      dvc: `stages:\n  t:\n    foreach: [a]\n    do:\n      cmd: echo\n      outz: [x]\n`,
      problem: { path: 'stages.t@a', message: /unknown key "outz"/ },
    },
    {
      rule: 'a stage without cmd',
      dvc: `stages:\n  s:\n    deps: [x]\n`,
      problem: { path: 'stages.s.cmd', message: /expected a command/ },
    },
  ];
  test.each(cases)('$rule', ({ dvc, problem }) => {
    const { pipeline, problems } = translate(dvc);
    expect(pipeline).toBeNull();
    expect(problems).toContainEqual(
      expect.objectContaining({ path: problem.path, message: expect.stringMatching(problem.message) }),
    );
  });

  test('remote outs, URL imports and frozen stages are named with the stage, and the rest runs', () => {
    const { pipeline, notes } = translate(
      `stages:\n  up:\n    cmd: aws s3 cp x s3://b/x\n    outs: [s3://b/x]\n  get:\n    cmd: curl -o d https://e.org/d\n    deps: [https://e.org/d]\n  old:\n    cmd: echo\n    frozen: true\n  run:\n    cmd: echo ok\n`,
    );
    expect(Object.keys(pipeline?.stages ?? {})).toEqual(['run']);
    expect(notes).toEqual([
      expect.stringMatching(/^stage up: cannot be honoured \(s3:\/\/b\/x/),
      expect.stringMatching(/^stage get: cannot be honoured \(https:\/\/e.org\/d/),
      expect.stringMatching(/^stage old: frozen/),
    ]);
  });
});
