import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { startSlurm } from './slurm-job.js';

const exec = promisify(execFile);

let repo: TestRepo | undefined;
let scratch: string | undefined;
let realSbatch = '';

beforeAll(async () => {
  await startSlurm();
  realSbatch = (await exec('bash', ['-c', 'command -v sbatch'])).stdout.trim();
}, 120_000);
afterEach(async () => {
  await repo?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
  repo = scratch = undefined;
});

/**
 * A directory holding an `sbatch` that stands in front of the real one: each call appends a
 * line to `calls`; calls up to `failing` run `before` (shell, with "$@" the call's arguments)
 * then fail as sbatch does with `error`; later ones are the real sbatch.
 */
async function sbatchWrapper(
  failing: number,
  error: string,
  before = '',
): Promise<{ dir: string; calls: string }> {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-sbatch-retry-'));
  const calls = join(scratch, 'calls');
  const script = `#!/usr/bin/env bash
echo call >>'${calls}'
if [ "$(wc -l <'${calls}')" -le ${failing} ]; then
  ${before || ':'}
  echo 'sbatch: error: ${error}' >&2
  exit 1
fi
exec '${realSbatch}' "$@"
`;
  await writeFile(join(scratch, 'sbatch'), script);
  await chmod(join(scratch, 'sbatch'), 0o755);
  return { dir: scratch, calls };
}

/** The jobs Slurm knows whose comment marks them as one of the run's submissions of `stage`. */
async function jobsOf(runId: string, stage: string): Promise<string[]> {
  const { stdout } = await exec('squeue', ['--noheader', '--states=all', '--format=%i|%k']);
  return stdout
    .split('\n')
    .filter((line) => line.split('|')[1]?.startsWith(`fluksio:${runId}:${stage}:`))
    .map((line) => line.split('|')[0] ?? '');
}

async function runThrough(wrapper: { dir: string }) {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo trained > model.txt
    outs: [model.txt]
`,
    },
  });
  return runJson(['--backend', 'slurm'], {
    cwd: repo.dir,
    env: { PATH: `${wrapper.dir}:${process.env.PATH ?? ''}` },
  });
}

test('sbatch that cannot reach slurmctld is tried again with backoff, and the stage runs as one job', async () => {
  const wrapper = await sbatchWrapper(
    2,
    'Batch job submission failed: Unable to contact slurm controller (connect failure)',
  );
  const result = await runThrough(wrapper);
  expect(result.report.run.status, result.stderr).toBe('succeeded');
  expect(stageOf(result.report, 'train')).toMatchObject({ status: 'ran', exitCode: 0 });
  expect((await readFile(wrapper.calls, 'utf8')).trim().split('\n')).toHaveLength(3);
  expect(await jobsOf(result.report.run.id, 'train')).toHaveLength(1);
}, 120_000);

test('a job an sbatch queued before it timed out is adopted, not submitted twice', async () => {
  // The first call submits the job for real, then says what an sbatch whose reply was lost says.
  const wrapper = await sbatchWrapper(
    1,
    'Batch job submission failed: Socket timed out on send/recv operation',
    `'${realSbatch}' "$@" >/dev/null`,
  );
  const result = await runThrough(wrapper);
  expect(result.report.run.status, result.stderr).toBe('succeeded');
  expect(stageOf(result.report, 'train')).toMatchObject({ status: 'ran', exitCode: 0 });
  expect((await readFile(wrapper.calls, 'utf8')).trim().split('\n')).toHaveLength(1);
  expect(await jobsOf(result.report.run.id, 'train')).toHaveLength(1);
}, 120_000);

test('an sbatch error that is no unreachable controller is not tried again', async () => {
  const wrapper = await sbatchWrapper(
    5,
    'Batch job submission failed: Invalid account or account/partition combination specified',
  );
  const result = await runThrough(wrapper);
  expect(result.report.run.status, result.stderr).toBe('failed');
  expect(stageOf(result.report, 'train')).toMatchObject({
    status: 'failed',
    error:
      'Slurm refused the job (sbatch): Batch job submission failed: Invalid account or account/partition combination specified',
  });
  expect((await readFile(wrapper.calls, 'utf8')).trim().split('\n')).toHaveLength(1);
}, 120_000);
