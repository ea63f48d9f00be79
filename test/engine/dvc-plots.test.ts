import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

/** What `fluksio show RUN --json` holds of the series. */
type Series = Record<string, { stage: string; points: { step: number; value: number }[] }>;

// train logs as dvclive does (one TSV per metric, step and value); evaluate writes an
// sklearn-style ROC file (an object holding the records, Python's Infinity) and a CSV
// whose third line is cut short. The scripts sit in src/, as DVC projects keep them.
const TRAIN = `import os
for split, base in (("train", 1.0), ("eval", 1.2)):
    os.makedirs(f"dvclive/plots/metrics/{split}", exist_ok=True)
    with open(f"dvclive/plots/metrics/{split}/loss.tsv", "w") as out:
        out.write("timestamp\\tstep\\tloss\\n")
        for step in range(4):
            out.write(f"{1700000000 + step}\\t{step}\\t{base / (step + 1)}\\n")
`;
const EVALUATE = `import json, os
os.makedirs("eval", exist_ok=True)
roc = [{"fpr": 0.0, "tpr": 0.0, "threshold": float("inf")},
       {"fpr": 0.0, "tpr": 0.5, "threshold": 0.8},
       {"fpr": 0.25, "tpr": 0.75, "threshold": 0.5},
       {"fpr": 1.0, "tpr": 1.0, "threshold": 0.1}]
with open("eval/roc.json", "w") as out:
    json.dump({"roc": roc}, out)
with open("eval/broken.csv", "w") as out:
    out.write("step,acc\\n0,0.5\\n1\\n")
`;
const dvcYaml = (y: string) =>
  [
    'stages:',
    '  train:',
    '    cmd: python3 src/train.py',
    '    deps: [src/train.py]',
    '    outs: [dvclive]',
    '  evaluate:',
    '    cmd: python3 src/evaluate.py',
    '    deps: [src/evaluate.py, dvclive/plots/metrics/train/loss.tsv]',
    '    plots:',
    `      - eval/roc.json: { cache: false, template: simple, x: fpr, y: ${y} }`,
    '      - eval/broken.csv',
    'plots:',
    '  - dvclive/plots/metrics:',
    '      x: step',
    '',
  ].join('\n');

let repo: TestRepo;
beforeAll(async () => {
  repo = await makeRepo({
    files: { 'dvc.yaml': dvcYaml('tpr'), 'src/train.py': TRAIN, 'src/evaluate.py': EVALUATE },
  });
});
afterAll(async () => {
  await repo.cleanup();
});

async function seriesOf(runId: string): Promise<Series> {
  const shown = await runCli(['show', runId, '--json'], { cwd: repo.dir });
  expect(shown.code, shown.stderr).toBe(0);
  return (JSON.parse(shown.stdout) as { series: Series }).series;
}

const points = (values: number[]) => values.map((value, step) => ({ step, value }));
const EXPECTED: Series = {
  'dvclive/plots/metrics/eval/loss': { stage: 'train', points: points([1.2, 1.2 / 2, 1.2 / 3, 1.2 / 4]) },
  'dvclive/plots/metrics/train/loss': { stage: 'train', points: points([1, 1 / 2, 1 / 3, 1 / 4]) },
  'eval/roc/fpr': { stage: 'evaluate', points: points([0, 0, 0.25, 1]) },
  'eval/roc/tpr': { stage: 'evaluate', points: points([0, 0.5, 0.75, 1]) },
};

test('plot files a DVC stage writes become the run’s metric series, and come back with the cached stage', async () => {
  const first = await runJson([], { cwd: repo.dir });
  expect(first.code, first.stderr).toBe(0);
  expect(statuses(first.report)).toEqual({ train: 'ran', evaluate: 'ran' });
  // The unreadable file is a warning on its stage, naming the file and the line; the run succeeds.
  const evaluate = first.report.stages.find((stage) => stage.name === 'evaluate');
  expect(evaluate?.warnings).toEqual([
    'plot file eval/broken.csv gives no series: line 3: Invalid Record Length: expect 2, got 1',
  ]);
  // Plots give series, not metric values; the files stay outs.
  expect(first.report.metrics).toEqual({});
  expect(readFileSync(join(repo.dir, 'eval/broken.csv'), 'utf8')).toBe('step,acc\n0,0.5\n1\n');
  expect(await seriesOf(first.report.run.id)).toEqual(EXPECTED);

  const cached = await runJson([], { cwd: repo.dir });
  expect(cached.code, cached.stderr).toBe(0);
  expect(statuses(cached.report)).toEqual({ train: 'cached', evaluate: 'cached' });
  expect(await seriesOf(cached.report.run.id)).toEqual(EXPECTED);
});

test('changing how a plot is read re-runs its stage, saying why', async () => {
  await repo.write('dvc.yaml', dvcYaml('[tpr, threshold]'));
  const changed = await runJson([], { cwd: repo.dir });
  expect(changed.code, changed.stderr).toBe(0);
  expect(statuses(changed.report)).toEqual({ train: 'cached', evaluate: 'ran' });
  expect(changed.report.stages.find((stage) => stage.name === 'evaluate')?.reasons).toContain(
    'declared plots changed',
  );
  const series = await seriesOf(changed.report.run.id);
  // The infinite threshold is a gap: no point at step 0.
  expect(series['eval/roc/threshold']).toEqual({
    stage: 'evaluate',
    points: [
      { step: 1, value: 0.8 },
      { step: 2, value: 0.5 },
      { step: 3, value: 0.1 },
    ],
  });
  expect(series['dvclive/plots/metrics/train/loss']).toEqual(EXPECTED['dvclive/plots/metrics/train/loss']);
});
