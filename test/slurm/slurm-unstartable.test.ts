import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf } from '../helpers/run-cli.js';
import { startSlurm, waitFor } from './slurm-job.js';

const exec = promisify(execFile);

// A partition of this test's own, so that the limits it sets reach no one else's jobs.
const partition = `fluksio-unstartable-${randomBytes(4).toString('hex')}`;
let repo: TestRepo | undefined;

/** The ids of the jobs `squeue` lists in the test's partition, whatever their state. */
async function jobsInPartition(): Promise<string[]> {
  const { stdout } = await exec('squeue', [
    '--noheader',
    '--states=all',
    `--partition=${partition}`,
    '--format=%i|%T',
  ]);
  return stdout.split('\n').filter((line) => line !== '' && !line.endsWith('|CANCELLED'));
}

beforeAll(async () => {
  await startSlurm();
  await exec('scontrol', [
    'create',
    `PartitionName=${partition}`,
    `Nodes=${hostname()}`,
    'MaxTime=60',
    'State=UP',
  ]);
}, 120_000);
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});
afterAll(async () => {
  await exec('scancel', [`--partition=${partition}`]).catch(() => {});
  // Slurm refuses to delete a partition while a job of it is still known to be ending.
  await waitFor('the test partition to be deletable', () =>
    exec('scontrol', ['delete', `PartitionName=${partition}`]).then(
      () => true,
      () => false,
    ),
  );
}, 60_000);

test('a job pending on a reason that never clears is cancelled after the grace, and the stage names the reason and the limit', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo trained > model.txt
    outs: [model.txt]
    resources: {time: 4h, partition: ${partition}}
`,
    },
  });
  const result = await runJson(['--backend', 'slurm', '--slurm-unstartable-grace', '2s'], { cwd: repo.dir });
  expect(result.report.run.status, result.stderr).toBe('failed');
  const stage = stageOf(result.report, 'train');
  expect(stage).toMatchObject({ status: 'failed' });
  expect(stage?.error).toMatch(
    new RegExp(
      `^Slurm would never start job \\d+ \\(pending: PartitionTimeLimit\\), so it was cancelled: asks for time 4h, partition ${partition}'s MaxTime is 1h$`,
    ),
  );
  // Cancelled, not left waiting in the queue.
  expect(await jobsInPartition()).toEqual([]);
}, 120_000);

test.each([
  {
    grace: 'soon',
    error: '--slurm-unstartable-grace: "soon" is not a duration: expected one like "90s", "2m" or "1h"',
  },
  {
    grace: '0s',
    error: '--slurm-unstartable-grace: "0s" is not a duration: expected one like "90s", "2m" or "1h"',
  },
])('--slurm-unstartable-grace $grace is refused at the command line', async ({ grace, error }) => {
  repo = await makeRepo({ files: { 'fluksio.yml': 'version: 1\nstages:\n  train:\n    cmd: "true"\n' } });
  const result = await runCli(['run', '--backend', 'slurm', '--slurm-unstartable-grace', grace], {
    cwd: repo.dir,
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(error);
});

test.each([
  {
    args: ['--backend', 'slurm', '--slurm-unstartable-grace', 'soon'],
    error: '--slurm-unstartable-grace: "soon" is not a duration',
  },
  {
    args: ['--slurm-unstartable-grace', '2m'],
    error: '--slurm-unstartable-grace: only with --backend slurm',
  },
])('fluksio runner $args is refused before it starts', async ({ args, error }) => {
  repo = await makeRepo({ files: { 'fluksio.yml': 'version: 1\nstages:\n  train:\n    cmd: "true"\n' } });
  const result = await runCli(
    ['runner', '--url', 'http://127.0.0.1:9', '--work-dir', `${repo.dir}/.runner`, ...args],
    {
      cwd: repo.dir,
      env: { FLUKSIO_RUNNER_TOKEN: 'not-used' },
    },
  );
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(error);
});
