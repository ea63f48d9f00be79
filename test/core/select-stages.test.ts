import { expect, test } from 'vitest';
import { selectStages } from '../../core/pipeline/select-stages.js';
import { stageDag } from '../../core/pipeline/stage-dag.js';
import { stageDagMermaid } from '../../present/github/stage-dag-mermaid.js';
import type { Pipeline } from '../../schemas/pipeline.js';

/** A stage as the graph sees it: what it reads and makes. */
function stage(deps: string[], outs: string[]): Pipeline['stages'][string] {
  return {
    cmd: 'true',
    deps,
    outs,
    metrics: [],
    params: [],
    cache: true,
  } as unknown as Pipeline['stages'][string];
}

/** a → b → c, and a → x; d stands alone. */
const CHAIN = {
  stages: {
    a: stage([], ['a.txt']),
    b: stage(['a.txt'], ['b.txt']),
    c: stage(['b.txt'], ['c.txt']),
    x: stage(['a.txt'], ['x.txt']),
    d: stage([], ['d.txt']),
  },
};

/** top → left, right → bottom, declared out of order. */
const DIAMOND = {
  stages: {
    bottom: stage(['left.txt', 'right.txt'], ['bottom.txt']),
    left: stage(['top.txt'], ['left.txt']),
    'right@1': stage(['top.txt'], ['right.txt']),
    top: stage([], ['top.txt']),
  },
};

test.each([
  { named: ['b'], downstream: false, stages: ['a', 'b'] },
  { named: ['c'], downstream: false, stages: ['a', 'b', 'c'] },
  { named: ['b'], downstream: true, stages: ['a', 'b', 'c'] },
  { named: ['x', 'd'], downstream: false, stages: ['a', 'x', 'd'] },
  { named: ['a'], downstream: true, stages: ['a', 'b', 'c', 'x'] },
])('$named (downstream: $downstream) selects $stages', ({ named, downstream, stages }) => {
  expect(selectStages(CHAIN, { named, downstream })).toEqual({
    selection: { named, downstream, stages },
    problems: [],
  });
});

test('selecting every stage, or none, is the whole pipeline: no selection', () => {
  expect(selectStages(DIAMOND, { named: ['bottom'], downstream: false }).selection).toBeNull();
  expect(selectStages(DIAMOND, { named: ['top'], downstream: true }).selection).toBeNull();
  expect(selectStages(DIAMOND, { named: [], downstream: false }).selection).toBeNull();
  expect(selectStages(DIAMOND, { named: ['right@1'], downstream: false }).selection?.stages).toEqual([
    'right@1',
    'top',
  ]);
});

test('unknown stages are named with every known stage', () => {
  expect(selectStages(CHAIN, { named: ['b', 'nope', 'trian'], downstream: false })).toEqual({
    selection: null,
    problems: [
      { path: '', message: 'No stage named "nope", "trian" in the pipeline; its stages are: a, b, c, x, d' },
    ],
  });
});

test.each([
  // A colon where fluksio takes `=` (Hydra's `lr: 0.1` habit, YAML's).
  [['lr:0.1'], '"lr:0.1" is a parameter written with ":": write lr=0.1'],
  [['params.yaml:lr:0.1'], '"params.yaml:lr:0.1" is a parameter written with ":": write params.yaml:lr=0.1'],
  [
    ['batch_size:64'],
    '"batch_size:64" looks like a parameter written with ":": parameters are NAME=VALUE, e.g. batch_size=64',
  ],
  // The value given as the next word (`--lr 0.1` without the dashes).
  [['lr', '0.1'], '"lr" is a parameter: set it with lr=0.1'],
  [['lr'], '"lr" is a parameter: set it with lr=VALUE'],
])('an unknown stage %j that is a parameter mistyped says how to write it', (named, hint) => {
  const pipeline = { ...CHAIN, params: { lr: { type: 'float', default: 0.1 } } } as unknown as Pipeline;
  const [problem] = selectStages(pipeline, { named, downstream: false }).problems;
  expect(problem?.message).toContain('its stages are: a, b, c, x, d');
  expect(problem?.message).toContain(`(${hint})`);
});

test('a diamond is drawn in layers, with edges naming what they carry, and as Mermaid', () => {
  const dag = stageDag(DIAMOND);
  expect(dag.nodes.map((node) => [node.name, node.layer])).toEqual([
    ['bottom', 3],
    ['left', 2],
    ['right@1', 2],
    ['top', 1],
  ]);
  expect(dag.edges).toEqual([
    { from: 'left', to: 'bottom', paths: ['left.txt'] },
    { from: 'right@1', to: 'bottom', paths: ['right.txt'] },
    { from: 'top', to: 'left', paths: ['top.txt'] },
    { from: 'top', to: 'right@1', paths: ['top.txt'] },
  ]);
  expect(stageDagMermaid(dag, { fenced: true })).toBe(
    [
      '```mermaid',
      'flowchart TD',
      '  s0["bottom"]',
      '  s1["left"]',
      '  s2["right@1"]',
      '  s3["top"]',
      '  s1 --> s0',
      '  s2 --> s0',
      '  s3 --> s1',
      '  s3 --> s2',
      '```',
      '',
    ].join('\n'),
  );
  expect(stageDagMermaid(stageDag({ stages: { 'say "hi"': stage([], ['o']) } }))).toBe(
    'flowchart TD\n  s0["say #quot;hi#quot;"]\n',
  );
});
