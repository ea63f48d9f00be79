import { afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { startSlurm } from './slurm-job.js';

let repo: TestRepo | undefined;
beforeAll(startSlurm, 120_000);
afterEach(async () => {
  await repo?.cleanup();
});

// What a careless user asks of the test cluster (one node: 2 CPUs, 4000 MB, 2 GPUs; partitions
// debug and gpu), and what sbatch answers: the stage's error says it, not "exited with code 1".
test.each([
  {
    resources: '{partition: nope}',
    error:
      'Slurm refused the job (sbatch): invalid partition specified: nope; Batch job submission failed: Invalid partition name specified',
  },
  {
    resources: '{gpus: 5}',
    error:
      'Slurm refused the job (sbatch): Batch job submission failed: Requested node configuration is not available',
  },
  {
    resources: '{memory: 32GiB}',
    error:
      'Slurm refused the job (sbatch): Memory specification can not be satisfied; Batch job submission failed: Requested node configuration is not available',
  },
])(
  'a stage asking for resources: $resources that Slurm refuses fails with sbatch’s reason',
  async ({ resources, error }) => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo trained > model.txt
    outs: [model.txt]
    resources: ${resources}
`,
      },
    });
    const result = await runJson(['--backend', 'slurm'], { cwd: repo.dir });
    expect(result.report.run.status, result.stderr).toBe('failed');
    expect(stageOf(result.report, 'train')).toMatchObject({ status: 'failed', error });
    expect(result.report.run.reason).toBe(`Stage train failed: ${error}`);
  },
  60_000,
);
