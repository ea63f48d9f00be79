import { describe, expect, test } from 'vitest';
import {
  parsePlotTable,
  plotFormatOf,
  PlotTableError,
  type PlotFormat,
} from '../../core/plots/parse-plot-table.js';
import { MAX_PLOT_ROWS, plotSeries, plotSeriesName, type PlotSeries } from '../../core/plots/plot-series.js';
import type { PlotSpec } from '../../schemas/plot-spec.js';

/** A plot file's text read as series, as the runner reads it: its spec's x and y are the fields JSON must have. */
function seriesOf(path: string, text: string, spec: Omit<PlotSpec, 'path'> = {}): PlotSeries[] {
  const format = plotFormatOf(path);
  if (format === null) throw new Error(`${path} is no data file`);
  const fields = [spec.x, ...(spec.y ?? [])].filter((field) => field !== undefined);
  const table = parsePlotTable(text, format, { fields, ...(spec.header === false ? { header: false } : {}) });
  return plotSeries(table, { path, ...spec }, path);
}

const points = (...pairs: [number, number][]) => pairs.map(([step, value]) => ({ step, value }));

describe('plot files read as series', () => {
  const cases: {
    rule: string;
    path: string;
    text: string;
    spec?: Omit<PlotSpec, 'path'>;
    series: PlotSeries[];
  }[] = [
    {
      rule: "dvclive's TSV: the step column is x, the file's own column is y, named by its path",
      path: 'dvclive/plots/metrics/train/loss.tsv',
      text: 'step\tloss\n0\t0.9\n1\t0.5\n2\t0.25\n',
      series: [{ name: 'dvclive/plots/metrics/train/loss', points: points([0, 0.9], [1, 0.5], [2, 0.25]) }],
    },
    {
      rule: 'a JSON object holding a list of records (sklearn ROC, Python Infinity): x fpr is kept as a series, steps are row indexes',
      path: 'eval/plots/sklearn/roc/train.json',
      text: '{"roc": [{"fpr": 0.0, "tpr": 0.0, "threshold": Infinity}, {"fpr": 0.0, "tpr": 0.5, "threshold": 0.9}, {"fpr": 0.5, "tpr": 1.0, "threshold": 0.1}]}',
      spec: { x: 'fpr', y: ['tpr'] },
      series: [
        { name: 'eval/plots/sklearn/roc/train/fpr', points: points([0, 0], [1, 0], [2, 0.5]) },
        { name: 'eval/plots/sklearn/roc/train/tpr', points: points([0, 0], [1, 0.5], [2, 1]) },
      ],
    },
    {
      rule: 'a JSON list of records, y defaulting to the last numeric column and x to the row index',
      path: 'prc.json',
      text: '[{"precision": 1, "recall": 0.1, "label": "a"}, {"precision": 0.8, "recall": 0.6, "label": "b"}]',
      series: [{ name: 'prc/recall', points: points([0, 0.1], [1, 0.6]) }],
    },
    {
      rule: 'JSON: the first list whose records have the fields named (DVC skips others)',
      path: 'p.json',
      text: '{"meta": [{"run": 1}], "curves": {"roc": [{"fpr": 0, "tpr": 0.5}]}}',
      spec: { y: ['tpr'] },
      series: [{ name: 'p/tpr', points: points([0, 0.5]) }],
    },
    {
      rule: 'CSV with several y columns, integer x as steps (sorted by the reader, not here), gaps skipped',
      path: 'logs.csv',
      text: 'epoch,loss,acc\n10,0.5,0.8\n20,,0.9\n30,0.1,nan\n',
      spec: { x: 'epoch', y: ['loss', 'acc'] },
      series: [
        { name: 'logs/loss', points: points([10, 0.5], [30, 0.1]) },
        { name: 'logs/acc', points: points([10, 0.8], [20, 0.9]) },
      ],
    },
    {
      rule: 'x with a repeated value cannot be steps: row indexes, and x as a series',
      path: 'h.csv',
      text: 'bin,count\n1,5\n1,6\n2,7\n',
      spec: { x: 'bin' },
      series: [
        { name: 'h/bin', points: points([0, 1], [1, 1], [2, 2]) },
        { name: 'h/count', points: points([0, 5], [1, 6], [2, 7]) },
      ],
    },
    {
      rule: 'CSV without a header (header: false): columns are named 0, 1, …',
      path: 'raw.csv',
      text: '0.5,3\n0.25,4\n',
      spec: { header: false, y: ['1'] },
      series: [{ name: 'raw/1', points: points([0, 3], [1, 4]) }],
    },
    {
      rule: 'quoted CSV cells and a byte order mark',
      path: 'q.csv',
      text: '\uFEFFstep,"val"\n0,"1.5"\n1,"2.5"\n',
      series: [{ name: 'q/val', points: points([0, 1.5], [1, 2.5]) }],
    },
    {
      rule: 'YAML: a list of records',
      path: 'curve.yaml',
      text: '- {step: 0, acc: 0.5}\n- {step: 1, acc: 0.75}\n',
      series: [{ name: 'curve/acc', points: points([0, 0.5], [1, 0.75]) }],
    },
  ];
  test.each(cases)('$rule', ({ path, text, spec, series }) => {
    expect(seriesOf(path, text, spec)).toEqual(series);
  });
});

describe('plot files that give no series say which file part is wrong', () => {
  const cases: { rule: string; path: string; text: string; spec?: Omit<PlotSpec, 'path'>; error: RegExp }[] =
    [
      {
        rule: 'a CSV row with another number of cells names its line',
        path: 'a.csv',
        text: 'step,loss\n0,1\n1,2,3\n',
        error: /^line 3: Invalid Record Length/,
      },
      {
        rule: 'an unclosed quote names its line',
        path: 'a.csv',
        text: 'step,loss\n0,"1\n',
        error: /^line 2: Quote Not Closed/,
      },
      {
        rule: 'a header naming a column twice',
        path: 'a.tsv',
        text: 'loss\tloss\n1\t2\n',
        error: /^line 1: column "loss" appears twice/,
      },
      {
        rule: 'text in a y column names its line and column',
        path: 'a.tsv',
        text: 'step\tloss\n0\t0.5\n1\toops\n',
        spec: { y: ['loss'] },
        error: /^line 3: loss is "oops", not a number/,
      },
      {
        rule: 'a y column the file does not have, with the columns it has',
        path: 'a.csv',
        text: 'step,loss\n0,1\n',
        spec: { y: ['acc'] },
        error: /^has no y column "acc" \(its columns: step, loss\)/,
      },
      {
        rule: 'an x column the file does not have',
        path: 'a.csv',
        text: 'step,loss\n0,1\n',
        spec: { x: 'epoch' },
        error: /^has no x column "epoch"/,
      },
      {
        rule: 'no numeric column to default y to',
        path: 'a.csv',
        text: 'step,name\n0,a\n',
        error: /^has no numeric column to read as a series besides step/,
      },
      {
        // Where the engine says it: a position, or the excerpt it quotes (never repeated:
        // the file may hold a secret, cut where no mask finds it) around the token.
        rule: 'a JSON syntax error says where',
        path: 'a.json',
        text: '[\n  {"step": 0,\n   "loss": }\n]',
        error: /^line 3, column 12: is not valid JSON: Unexpected token '\}'$/,
      },
      {
        rule: 'a JSON record holding an object names the record and field (zod)',
        path: 'a.json',
        text: '[{"step": 0, "loss": 1}, {"step": 1, "loss": {"v": 2}}]',
        error: /^record 2, field "loss": expected a number, text, true\/false or null/,
      },
      {
        rule: 'a JSON object without a list of records having the fields',
        path: 'a.json',
        text: '{"roc": [{"fpr": 0}]}',
        spec: { x: 'fpr', y: ['tpr'] },
        error: /^holds no list of records whose records have "fpr", "tpr"/,
      },
      {
        rule: 'a JSON number alone',
        path: 'a.json',
        text: '3',
        error: /^expected a list of records or an object holding one, found a number/,
      },
      {
        rule: 'a YAML syntax error names its line',
        path: 'a.yaml',
        text: '- {step: 0\n- x: [\n',
        error: /^line \d+: is not valid YAML/,
      },
    ];
  test.each(cases)('$rule', ({ path, text, spec, error }) => {
    let thrown: unknown;
    try {
      seriesOf(path, text, spec);
    } catch (caught) {
      thrown = caught;
    }
    expect(thrown).toBeInstanceOf(PlotTableError);
    expect((thrown as Error).message).toMatch(error);
  });

  test('a file of more rows than are read as series', () => {
    const text = `step,loss\n${Array.from({ length: MAX_PLOT_ROWS + 1 }, (_, i) => `${i},1`).join('\n')}\n`;
    expect(() => seriesOf('big.csv', text)).toThrow(
      `has ${MAX_PLOT_ROWS + 1} rows; at most ${MAX_PLOT_ROWS}`,
    );
  });
});

test.each<[string, PlotFormat | null]>([
  ['a.csv', 'csv'],
  ['a.TSV', 'tsv'],
  ['a.json', 'json'],
  ['a.yml', 'yaml'],
  ['a.yaml', 'yaml'],
  ['importance.png', null],
  ['folder', null],
])('plotFormatOf(%s) is %s', (path, format) => {
  expect(plotFormatOf(path)).toBe(format);
});

test.each([
  ['dvclive/plots/metrics/eval/loss.tsv', 'loss', 'dvclive/plots/metrics/eval/loss'],
  ['./eval/roc.json', 'tpr', 'eval/roc/tpr'],
  ['sub/v1.2/data.csv', 'acc', 'sub/v1.2/data/acc'],
])('plotSeriesName(%s, %s) is %s', (path, column, name) => {
  expect(plotSeriesName(path, column)).toBe(name);
});
