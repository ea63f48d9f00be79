import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { readMetricsFile } from '../../runner/output/metrics-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-metrics-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function read(name: string, content: string): Promise<Record<string, number>> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return (await readMetricsFile(file, `metrics/${name}`)).metrics;
}

test.each([
  {
    name: 'eval.json',
    content: '{"acc": 0.9, "eval": {"loss": 0.25, "f1": {"macro": 0.5}}, "scores": [1, 2.5], "n": 3}',
    metrics: { acc: 0.9, 'eval.loss': 0.25, 'eval.f1.macro': 0.5, 'scores.0': 1, 'scores.1': 2.5, n: 3 },
  },
  {
    name: 'mixed.json',
    content: '{"ok": true, "note": "fine", "missing": null, "huge": 1e999, "lr": 0.1, "empty": {}}',
    metrics: { lr: 0.1 },
  },
  {
    name: 'eval.yaml',
    content: 'acc: 0.9\neval:\n  loss: 0.25\n  bad: .nan\n  inf: .inf\nscores:\n  - 1\n  - 2\nname: run\n',
    metrics: { acc: 0.9, 'eval.loss': 0.25, 'scores.0': 1, 'scores.1': 2 },
  },
  { name: 'eval.yml', content: 'acc: 0.9\n', metrics: { acc: 0.9 } },
  { name: 'metrics.txt', content: '{"acc": 0.5}', metrics: { acc: 0.5 } },
  { name: 'metrics', content: 'acc: 0.5\nloss: 1e-3\n', metrics: { acc: 0.5, loss: 0.001 } },
  { name: 'list.json', content: '[0.1, 0.2]', metrics: { '0': 0.1, '1': 0.2 } },
  { name: 'trailing.json', content: '{"acc": 0.9, // best epoch\n}', metrics: { acc: 0.9 } },
])('$name flattens to $metrics', async ({ name, content, metrics }) => {
  expect(await read(name, content)).toEqual(metrics);
});

test.each([
  {
    name: 'eval.json',
    // A missing colon; a trailing comma or a comment is read (JSON5), as Python's NaN is.
    content: '{\n  "acc": 0.9,\n  "f1" 0.8\n}',
    error: /^Metrics file metrics\/eval\.json is not valid JSON: .* at position 23 \(line 3, column 8\)$/,
  },
  {
    name: 'eval.json',
    content: 'acc: 0.9',
    error: /^Metrics file metrics\/eval\.json is not valid JSON: Unexpected token/,
  },
  {
    name: 'eval.yaml',
    content: 'acc: 0.9\n  loss: 0.2\n',
    error:
      'Metrics file metrics/eval.yaml is not valid YAML: Nested mappings are not allowed in compact mappings at line 1, column 6',
  },
  {
    name: 'eval.yaml',
    content: 'acc: 0.9\nacc: 0.8\n',
    error: 'Metrics file metrics/eval.yaml is not valid YAML: Map keys must be unique at line 2, column 1',
  },
  {
    name: 'metrics.out',
    content: 'a: [1, 2\n',
    error:
      /^Metrics file metrics\/metrics\.out is neither JSON nor YAML: Flow sequence .* at line 2, column 1$/,
  },
  {
    name: 'eval.json',
    content: '0.93',
    error: 'Metrics file metrics/eval.json must hold an object of metric names, found a number',
  },
  {
    name: 'eval.yaml',
    content: '',
    error:
      'Metrics file metrics/eval.yaml must hold an object of metric names, found nothing (it is empty or null)',
  },
])('a malformed $name says what is wrong and where', async ({ name, content, error }) => {
  await expect(read(name, content)).rejects.toThrow(error);
});

test('the NaN and Infinity that Python writes for a diverged loss are read as left out, with a warning', async () => {
  const file = path.join(dir, 'eval.json');
  await writeFile(
    file,
    '{"loss": NaN, "best": -Infinity, "worst": Infinity, "note": "NaN here", "acc": 0.5}',
  );
  expect(await readMetricsFile(file, 'metrics/eval.json')).toEqual({
    metrics: { acc: 0.5 },
    warnings: [
      'Metrics file metrics/eval.json: loss is NaN, not a finite number: left out',
      'Metrics file metrics/eval.json: best is -Infinity, not a finite number: left out',
      'Metrics file metrics/eval.json: worst is Infinity, not a finite number: left out',
    ],
  });
});

test('a number in quotes, and any value of a declared metric that is not a number, are warned about', async () => {
  const file = path.join(dir, 'eval.json');
  await writeFile(file, '{"acc": "0.93", "f1": true, "loss": null, "model": "resnet", "name": "x", "n": 4}');
  expect(await readMetricsFile(file, 'metrics/eval.json', new Set(['f1', 'loss', 'model']))).toEqual({
    metrics: { n: 4 },
    warnings: [
      'Metrics file metrics/eval.json: acc is the string "0.93", not a number: left out (write the number without quotes)',
      'Metrics file metrics/eval.json: f1 is true, not a number: left out, so the metric has no value in this run',
      'Metrics file metrics/eval.json: loss is null, not a number: left out, so the metric has no value in this run',
      'Metrics file metrics/eval.json: model is the string "resnet", not a number: left out, so the metric has no value in this run',
    ],
  });
});

test('a missing metrics file is named', async () => {
  await expect(readMetricsFile(path.join(dir, 'nope.json'), 'metrics/nope.json')).rejects.toThrow(
    /^Metrics file metrics\/nope\.json does not exist: ENOENT/,
  );
});
