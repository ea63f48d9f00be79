import { expect, test } from 'vitest';
import { translateDvc, type DvcTranslation } from '../../core/dvc/translate-dvc.js';
import { validatePipeline } from '../../core/pipeline/validate-pipeline.js';

function translate(dvcYaml: string): DvcTranslation {
  return translateDvc({ dvcYaml, pipelineDir: '', readFile: () => undefined });
}

/** Each row: how DVC declares a plot, and the plot specs (and notes) fluksio's stages get. */
const rules: { rule: string; dvc: string; plots: Record<string, object[] | undefined>; notes?: RegExp[] }[] =
  [
    {
      rule: 'a stage plot with no flags: DVC’s defaults; it stays an out',
      dvc: 'stages:\n  s:\n    cmd: run\n    plots:\n      - loss.tsv\n',
      plots: { s: [{ path: 'loss.tsv' }] },
    },
    {
      rule: 'stage flags x, y (one or several), header, template simple; cache: false changes nothing',
      dvc: 'stages:\n  s:\n    cmd: run\n    plots:\n      - roc.json: { cache: false, template: simple, x: fpr, y: tpr }\n      - log.csv: { y: [loss, acc], header: false }\n',
      plots: {
        s: [
          { path: 'roc.json', x: 'fpr', y: ['tpr'] },
          { path: 'log.csv', y: ['loss', 'acc'], header: false },
        ],
      },
    },
    {
      rule: 'wdir is folded into plot paths',
      dvc: 'stages:\n  s:\n    cmd: run\n    wdir: sub\n    plots:\n      - out/roc.json: { x: fpr, y: tpr }\n',
      plots: { s: [{ path: 'sub/out/roc.json', x: 'fpr', y: ['tpr'] }] },
    },
    {
      rule: 'a confusion matrix and an image are kept as outs, not read',
      dvc: 'stages:\n  s:\n    cmd: run\n    plots:\n      - cm.json: { template: confusion, x: actual, y: predicted }\n      - importance.png\n',
      plots: { s: undefined },
    },
    {
      rule: 'top-level plots with y naming files go to the stage whose out holds them (example-get-started)',
      dvc: [
        'stages:',
        '  evaluate:',
        '    cmd: run',
        '    outs: [eval]',
        'plots:',
        '  - ROC:',
        '      template: simple',
        '      x: fpr',
        '      y:',
        '        eval/plots/sklearn/roc/train.json: tpr',
        '        eval/plots/sklearn/roc/test.json: tpr',
        '  - Confusion-Matrix:',
        '      template: confusion',
        '      x: actual',
        '      y: { eval/plots/sklearn/cm/train.json: predicted }',
        '  - eval/plots/images/importance.png',
        '',
      ].join('\n'),
      plots: {
        evaluate: [
          { path: 'eval/plots/sklearn/roc/train.json', x: 'fpr', y: ['tpr'] },
          { path: 'eval/plots/sklearn/roc/test.json', x: 'fpr', y: ['tpr'] },
        ],
      },
    },
    {
      rule: 'a top-level folder plot (dvclive) goes to the stage writing the folder, or the outs inside it',
      dvc: [
        'stages:',
        '  train:',
        '    cmd: run',
        '    outs: [dvclive]',
        '  eval:',
        '    cmd: run',
        '    outs: [reports/a.csv, reports/b.csv]',
        'plots:',
        '  - dvclive/plots/metrics: { x: step }',
        '  - reports',
        '',
      ].join('\n'),
      plots: {
        train: [{ path: 'dvclive/plots/metrics', x: 'step' }],
        eval: [{ path: 'reports/a.csv' }, { path: 'reports/b.csv' }],
      },
    },
    {
      rule: 'a plot drawn alike by its stage and at the top level is read once',
      dvc: 'stages:\n  s:\n    cmd: run\n    plots:\n      - roc.json: { x: fpr, y: tpr }\nplots:\n  - roc.json: { x: fpr, y: tpr }\n',
      plots: { s: [{ path: 'roc.json', x: 'fpr', y: ['tpr'] }] },
    },
    {
      rule: 'a top-level plot no stage writes is named; x from another file is named',
      dvc: [
        'stages:',
        '  s:',
        '    cmd: run',
        '    outs: [out.csv]',
        'plots:',
        '  - committed.csv',
        '  - Pair:',
        '      x: { other.csv: epoch }',
        '      y: { out.csv: loss }',
        '',
      ].join('\n'),
      plots: { s: [{ path: 'out.csv', y: ['loss'] }] },
      notes: [
        /^plot committed.csv: no stage writes committed.csv, so it is not read as series$/,
        /^plot Pair: its x comes from another file than out.csv; each point's step is its row's index$/,
      ],
    },
  ];

test.each(rules)('$rule', ({ dvc, plots, notes }) => {
  const translation = translate(dvc);
  expect(translation.problems).toEqual([]);
  const got = Object.fromEntries(
    Object.entries(translation.pipeline?.stages ?? {}).map(([name, stage]) => [name, stage.plots]),
  );
  expect(got).toEqual(plots);
  expect(translation.notes).toEqual((notes ?? []).map((note) => expect.stringMatching(note)));
});

test('a wrong plot flag is a problem naming the stage, the entry and what is expected', () => {
  const translation = translate('stages:\n  s:\n    cmd: run\n    plots:\n      - roc.json: { x: [fpr] }\n');
  expect(translation.pipeline).toBeNull();
  expect(translation.problems).toEqual([
    { path: 'stages.s.plots[0].roc.json.x', message: 'expected a column name' },
  ]);
});

test('a wrong top-level plot is a problem naming it', () => {
  const translation = translate('stages:\n  s:\n    cmd: run\nplots:\n  - ROC: { y: 3 }\n  - 4\n');
  expect(translation.pipeline).toBeNull();
  expect(translation.problems).toEqual([
    {
      path: 'plots[0].ROC.y',
      message: 'expected a column name, a list of them, or {file: column or [columns]}',
    },
    { path: 'plots[1]', message: 'expected a path, or {plot id: definition}' },
  ]);
});

test('in fluksio.yml a plot must be an out of its stage (or inside one)', () => {
  const result = validatePipeline(
    [
      'version: 1',
      'stages:',
      '  train:',
      '    cmd: python3 train.py',
      '    outs: [logs]',
      '    plots:',
      '      - { path: logs/loss.tsv, x: step, y: [loss] }',
      '      - { path: roc.json }',
      '',
    ].join('\n'),
    { pipelineDir: '' },
  );
  expect(result.pipeline).toBeNull();
  expect(result.problems).toEqual([
    expect.objectContaining({
      path: 'stages.train.plots[1].path',
      message: '"roc.json" is not an out of this stage; list it (or a folder holding it) in outs',
    }),
  ]);
});
