import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf } from '../helpers/run-cli.js';

// What a user trying fluksio for the first time types, from the README alone: each slip
// is a usage error (exit 2) that says what was wrong and what to type, and creates nothing.

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
stages:
  train:
    cmd: echo \${lr} > model.txt
    params: [lr]
    outs: [model.txt]
`;

// lr too high: the loss diverges, and Python's json.dump writes NaN (and a careless string).
const DIVERGING = `version: 1
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    metrics: [metrics.json]
`;

let repo: TestRepo;
beforeAll(async () => {
  repo = await makeRepo({
    files: {
      'ml/fluksio.yml': PIPELINE,
      'ml/src/deep/notes.md': 'a folder below the pipeline\n',
      'empty/README.md': 'no pipeline here\n',
      '.gitignore': 'model.txt\nmetrics.json\n',
      'diverge/fluksio.yml': DIVERGING,
      'diverge/train.py':
        'import json\njson.dump({"loss": float("nan"), "accuracy": "0.5", "steps": 3}, open("metrics.json", "w"))\n',
    },
  });
});
afterAll(async () => {
  await repo.cleanup();
});

describe('finding the pipeline', () => {
  test('--pipeline naming the folder that holds it says which file to name', async () => {
    const result = await runCli(['run', '--pipeline', 'ml'], { cwd: repo.dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      '--pipeline: ml is a folder; name the pipeline file in it: --pipeline ml/fluksio.yml',
    );
    expect(existsSync(`${repo.dir}/ml/.fluksio`)).toBe(false);
    expect(existsSync(`${repo.dir}/.fluksio`)).toBe(false);
  });

  test('--pipeline naming a folder without one says so', async () => {
    for (const folder of ['empty', '.']) {
      const result = await runCli(['status', '--pipeline', folder], { cwd: repo.dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trim()).toBe(
        `--pipeline: ${folder} is a folder, and holds no fluksio.yml (nor dvc.yaml); name the pipeline file`,
      );
    }
  });

  test('run from a folder below the pipeline names the pipeline above', async () => {
    const result = await runCli(['run'], { cwd: `${repo.dir}/ml/src/deep` });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trim()).toBe(
      `No fluksio.yml (nor dvc.yaml) in ${repo.dir}/ml/src/deep, but there is ../../fluksio.yml: ` +
        'run from ../.. or give --pipeline ../../fluksio.yml',
    );
    expect(existsSync(`${repo.dir}/ml/.fluksio`)).toBe(false);
  });

  test('a folder with no pipeline in it or above keeps the plain message', async () => {
    const result = await runCli(['runs'], { cwd: `${repo.dir}/empty` });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.trim()).toBe(
      `No fluksio.yml (nor dvc.yaml) in ${repo.dir}/empty: run from the pipeline's folder or give --pipeline PATH`,
    );
  });
});

describe('a project that never ran', () => {
  test('fluksio runs lists no runs (exit 0): --json is [], --csv its header, the table says how to start', async () => {
    const cwd = `${repo.dir}/ml`;
    const json = await runCli(['runs', '--json'], { cwd });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
    expect(json.stderr).toBe('');
    const csv = await runCli(['runs', '--csv'], { cwd });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('id,status,commit,dirty,created\r\n');
    const table = await runCli(['runs'], { cwd });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toBe('No runs yet for fluksio.yml: start one with "fluksio run"\n');
    expect(existsSync(`${cwd}/.fluksio`)).toBe(false);
  });

  test('a run named to show is still a usage error', async () => {
    const result = await runCli(['show', '01ABC'], { cwd: `${repo.dir}/ml` });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('No runs yet for fluksio.yml: start one with "fluksio run"');
  });
});

test('a diverged loss (Python writes NaN) leaves the metric out with a warning; the stage succeeds', async () => {
  const { code, report, stdout } = await runJson([], { cwd: `${repo.dir}/diverge` });
  expect(code, stdout).toBe(0);
  expect(report.metrics).toEqual({ steps: 3 });
  expect(stageOf(report, 'train').warnings).toEqual([
    'Metrics file metrics.json: loss is NaN, not a finite number: left out',
    'Metrics file metrics.json: accuracy is the string "0.5", not a number: left out (write the number without quotes)',
  ]);
});

test.each([
  [['run', '--lr=0.5'], '(a parameter is given without dashes: lr=0.5)'],
  [['status', '--lr', '0.5'], '(a parameter is given without dashes: lr=0.5)'],
  [['run', '--lr'], '(a parameter is given without dashes: lr=VALUE)'],
])('%j: an option-style parameter is refused with how to write it', async (args, hint) => {
  const result = await runCli(args, { cwd: `${repo.dir}/ml` });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(`unknown option '${args[1]}'`);
  expect(result.stderr.trim().split('\n').at(-1)).toBe(hint);
  expect(existsSync(`${repo.dir}/ml/.fluksio`)).toBe(false);
});

test("an option mistyped gets commander's suggestion, and the parameter reading as the other possibility", async () => {
  const result = await runCli(['run', '--jbos', '2'], { cwd: `${repo.dir}/ml` });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('(Did you mean --jobs?)');
  expect(result.stderr.trim().split('\n').at(-1)).toBe('(or, for a parameter, without dashes: jbos=2)');
});

test('an unknown option of another command gets no parameter hint', async () => {
  const result = await runCli(['runs', '--lr=0.5'], { cwd: `${repo.dir}/ml` });
  expect(result.code).toBe(2);
  expect(result.stderr).not.toContain('parameter');
});

test.each([
  [['dag', '--json', '--md'], '--json, --md: choose one output format'],
  [['dag', '--mermaid', '--json'], '--json, --mermaid: choose one output format'],
])('%j: two output formats are refused, as runs and diff refuse them', async (args, message) => {
  const result = await runCli(args, { cwd: `${repo.dir}/ml` });
  expect(result.code).toBe(2);
  // --json was asked for: the refusal is JSON on stdout too (test/terminal/json-errors.test.ts).
  expect(JSON.parse(result.stdout)).toEqual({ error: { message, exitCode: 2 } });
  expect(result.stderr.trim()).toBe(message);
});
