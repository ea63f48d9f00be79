import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { readPlotSeries } from '../../runner/output/read-plot-series.js';

let root: string;
let outside: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-plots-')));
  outside = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-outside-')));
});
afterEach(async () => {
  await Promise.all([
    rm(root, { recursive: true, force: true }),
    rm(outside, { recursive: true, force: true }),
  ]);
});

async function write(relPath: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relPath)), { recursive: true });
  await writeFile(path.join(root, relPath), content);
}

test('a folder gives every data file in it, in name order; images and other files are passed over', async () => {
  await write('sub/dvclive/plots/metrics/train/loss.tsv', 'step\tloss\n0\t1\n1\t0.5\n');
  await write('sub/dvclive/plots/metrics/eval/loss.tsv', 'step\tloss\n0\t2\n');
  await write('sub/dvclive/plots/images/confusion.png', 'not data');
  await write('sub/dvclive/report.html', '<html>');
  const result = await readPlotSeries(
    [{ path: './dvclive/', x: 'step' }],
    { pipelineDir: `${root}/sub`, repoRoot: root },
    'train',
  );
  expect(result).toEqual({
    points: [
      { stage: 'train', name: 'dvclive/plots/metrics/eval/loss', step: 0, value: 2 },
      { stage: 'train', name: 'dvclive/plots/metrics/train/loss', step: 0, value: 1 },
      { stage: 'train', name: 'dvclive/plots/metrics/train/loss', step: 1, value: 0.5 },
    ],
    warnings: [],
  });
});

test('a missing file, a link leading out of the repository and a bad file are warnings; the rest is read', async () => {
  await writeFile(path.join(outside, 'secret.csv'), 'step,token\n0,12345\n');
  await mkdir(path.join(root, 'eval'));
  await symlink(path.join(outside, 'secret.csv'), path.join(root, 'eval/linked.csv'));
  await write('eval/bad.json', '{"roc": 3}');
  await write('eval/good.csv', 'step,acc\n0,0.5\n');
  const result = await readPlotSeries(
    [
      { path: 'eval/missing.csv' },
      { path: 'eval/linked.csv' },
      { path: 'eval/bad.json' },
      { path: 'eval/good.csv' },
    ],
    { pipelineDir: root, repoRoot: root },
    'evaluate',
  );
  expect(result.points).toEqual([{ stage: 'evaluate', name: 'eval/good/acc', step: 0, value: 0.5 }]);
  expect(result.warnings).toEqual([
    'plot eval/missing.csv cannot be read: the stage did not write it',
    'plot file eval/linked.csv gives no series: leads outside the repository',
    'plot file eval/bad.json gives no series: holds no list of records',
  ]);
});

test('one series name from two files: the first keeps it, the second is warned of; one file read twice alike is quiet', async () => {
  await write('a/loss.csv', 'step,loss\n0,1\n');
  await write('a.csv', 'step,loss\n0,9\n');
  const result = await readPlotSeries(
    [{ path: 'a/loss.csv' }, { path: 'a/loss.csv' }, { path: 'a.csv' }],
    { pipelineDir: root, repoRoot: root },
    's',
  );
  expect(result.points).toEqual([{ stage: 's', name: 'a/loss', step: 0, value: 1 }]);
  expect(result.warnings).toEqual([
    'plot file a.csv: series a/loss is already read from a/loss.csv; skipped',
  ]);
});

test('a plot folder linked out of the repository is not listed: one warning, nothing of what is there', async () => {
  await writeFile(path.join(outside, 'host-secret.json'), '[{"step": 0, "v": 1}]');
  await mkdir(path.join(root, 'dvclive'));
  await symlink(outside, path.join(root, 'dvclive/plots'));
  const result = await readPlotSeries(
    [{ path: 'dvclive/plots' }],
    { pipelineDir: root, repoRoot: root },
    'train',
  );
  expect(result).toEqual({
    points: [],
    warnings: ['plot dvclive/plots cannot be read: leads outside the repository'],
  });
});
