import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { jobFields, startSlurm } from './slurm-job.js';

let dir: string;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  // A project under a directory named as a careless user may (`100%done`, `%j`): sbatch reads
  // `%` in --output and --error as a pattern (`%j` is the job id).
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-100%j%x-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a stage whose job files lie under a path with % in it shows its output, and its job runs', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const lines: string[] = [];
  const result = await runStageProcess({
    cmd: 'echo "job $SLURM_JOB_ID" && echo "in $PWD" && echo "::metric name=loss::0.5" && echo oops >&2',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 60_000,
    launcher,
    stage: { name: 'train', jobKey: 'k1', resources: { cpus: 1 } },
    onLine: (stream, line) => lines.push(`${stream}: ${line}`),
  });
  const job = lines.flatMap(
    (line) => /^stderr: fluksio: submitted Slurm job (\d+)$/.exec(line)?.[1] ?? [],
  )[0];
  expect(result.exitCode, lines.join('\n')).toBe(0);
  expect(lines).toEqual(
    expect.arrayContaining([
      `stdout: job ${job}`,
      `stdout: in ${dir}`,
      'stdout: ::metric name=loss::0.5',
      'stderr: oops',
    ]),
  );
  expect((await jobFields(job ?? '')).JobState).toBe('COMPLETED');
}, 60_000);
