import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { fakeCommand, NO_ACCOUNTING } from './fake-slurm.js';
import { firstLine, jobFields, startSlurm } from './slurm-job.js';

let repo: TestRepo | undefined;
let shims: string;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  // sacct stood in for a cluster without accounting: where there is one, sacct gives a
  // code past 127 as that less 128, and the exit code read is no longer the one written.
  shims = await mkdtemp(join(tmpdir(), 'fluksio-slurm-own-exit-'));
  await fakeCommand(shims, 'sacct', [NO_ACCOUNTING]);
});
afterEach(async () => {
  await repo?.cleanup();
  await rm(shims, { recursive: true, force: true });
});

// The codes the attach process exits with when Slurm ends a job (75 requeued, 211 TIMEOUT,
// 214 PREEMPTED, 217 a job Slurm lost): a job's command exiting with one of them is no
// cause of Slurm's, and a run whose stage did is not given back.
test.each([75, 211, 214, 217])(
  'a stage whose own command exits %i on Slurm fails with that exit code, never a Slurm cause',
  async (code) => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo $SLURM_JOB_ID > job.txt && exit ${code}
    outs: [model.txt]
`,
      },
    });
    const result = await runJson(['--backend', 'slurm'], {
      cwd: repo.dir,
      env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    });
    expect(result.report.run.status, result.stderr).toBe('failed');
    expect(stageOf(result.report, 'train')).toMatchObject({
      status: 'failed',
      error: `exited with code ${code}`,
    });
    expect(result.report.run.reason ?? '').not.toMatch(/Slurm|queued again/);
    // Slurm's own record: the job's command failed with that code; Slurm ended nothing.
    const job = await firstLine(join(repo.dir, 'job.txt'));
    expect(await jobFields(job)).toMatchObject({ JobState: 'FAILED', ExitCode: `${code}:0` });
  },
  60_000,
);
