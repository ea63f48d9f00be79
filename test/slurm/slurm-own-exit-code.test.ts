import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { fakeCommand, NO_ACCOUNTING, realCommand } from './fake-slurm.js';
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
    const { result, dir } = await runStageExiting(code);
    expect(result.report.run.status, result.stderr).toBe('failed');
    expect(stageOf(result.report, 'train')).toMatchObject({
      status: 'failed',
      error: `exited with code ${code}`,
    });
    expect(result.report.run.reason ?? '').not.toMatch(/Slurm|queued again/);
    // Slurm's own record: the job's command failed with that code; Slurm ended nothing.
    const job = await firstLine(join(dir, 'job.txt'));
    expect(await jobFields(job)).toMatchObject({ JobState: 'FAILED', ExitCode: `${code}:0` });
  },
  60_000,
);

/**
 * A `sacct` in `dir` that answers as the real one once the accounting has the job's end (a
 * timestamp as its End), waiting up to 30 s for it: the attach process then reads a final
 * record whenever it asks, as on a cluster whose slurmdbd keeps up.
 */
async function sacctOnceFinal(dir: string): Promise<void> {
  const real = await realCommand('sacct');
  const file = join(dir, 'sacct');
  await writeFile(
    file,
    `#!/bin/bash
for _ in $(seq 150); do
  out=$('${real}' "$@") || exit
  [[ $out =~ \\|[0-9]{4}-[0-9]{2}-[0-9]{2}T ]] && break
  sleep 0.2
done
exec '${real}' "$@"
`,
  );
  await chmod(file, 0o755);
}

// sacct (22.05) gives a code past 127 as that less 128 (137 reads 9, 128 reads 0): the exit
// code is slurmctld's while it knows the job.
test.each([137, 128, 200])(
  'on a cluster with accounting, a stage whose command exits %i fails with that exit code',
  async (code) => {
    await sacctOnceFinal(shims);
    const { result, dir } = await runStageExiting(code);
    expect(stageOf(result.report, 'train'), result.stderr).toMatchObject({
      status: 'failed',
      error: `exited with code ${code}`,
    });
    const job = await firstLine(join(dir, 'job.txt'));
    expect(await jobFields(job)).toMatchObject({ JobState: 'FAILED', ExitCode: `${code}:0` });
  },
  90_000,
);

/** `fluksio run --json --backend slurm` of one stage whose command exits `code`, with the shims on PATH. */
async function runStageExiting(
  code: number,
): Promise<{ result: Awaited<ReturnType<typeof runJson>>; dir: string }> {
  const made = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo $SLURM_JOB_ID > job.txt && exit ${code}
    outs: [model.txt]
`,
    },
  });
  repo = made;
  const result = await runJson(['--backend', 'slurm'], {
    cwd: made.dir,
    env: { PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` },
  });
  return { result, dir: made.dir };
}
