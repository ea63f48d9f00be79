import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * Two values of a param share a cache key only if no stage can tell them apart. −0 and 0
 * did share one (canonical JSON writes −0 as `0`), while the params file a stage reads
 * held `lr: -0` for one and `lr: 0` for the other.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const run = async (args: string[]): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson(args, { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

test(
  'lr=-0 after lr=0 leaves what a run without the cache leaves, whichever file of its params a stage reads',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/used.yaml\n',
        'fluksio.yml': `version: 1
params:
  lr: { type: float, default: 0.5 }
params_file: params.yaml
stages:
  train:
    cmd: cp "$FLUKSIO_PARAMS_FILE" used.yaml
    params: [lr]
    outs: [used.yaml]
`,
      },
    });
    expect(stageOf(await run(['lr=0']), 'train').status).toBe('ran');
    expect(await readFile(join(repo.dir, 'used.yaml'), 'utf8')).toBe('lr: 0\n');

    const negative = await run(['lr=-0']);
    expect(stageOf(negative, 'train').status).toBe('cached');
    const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['used.yaml'], args: ['lr=-0'] });
    expect(twin.report.run.status).toBe('succeeded');
    expect(await snapshotPaths(repo.dir, ['used.yaml'])).toEqual(twin.outputs);
  },
  SLOW,
);
