import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { jobFields, startSlurm } from './slurm-job.js';

let repo: TestRepo | undefined;
beforeAll(startSlurm, 120_000);
afterEach(async () => {
  await repo?.cleanup();
});

// A stage's job files are named by its cache key and its name (by the run's id and its name,
// twice, when it is not cached): a long name must not make them longer than a file name may be
// (255 bytes), which failed the stage before sbatch ran, as "sbatch exited without saying why".
test.each([{ cache: true }, { cache: false }])(
  'a stage with a 200-character name runs as a Slurm job (cache: $cache)',
  async ({ cache }) => {
    const name = `train_${'x'.repeat(194)}`;
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  ${name}:
    cmd: echo "job $SLURM_JOB_ID" && echo trained > model.txt
    outs: [model.txt]
    cache: ${cache}
`,
      },
    });
    const result = await runJson(['--backend', 'slurm'], { cwd: repo.dir });
    const stage = stageOf(result.report, name);
    expect(stage.error, result.stderr).toBeNull();
    expect(stage.status).toBe('ran');
    const job = stage.usage?.job ?? '';
    expect((await jobFields(job)).JobName).toBe(`fluksio-${name}`);
    // Its files are gone once it ended: the next run's launch submits anew.
    const jobDirs = join(repo.dir, '.fluksio', 'slurm');
    expect((await readdir(jobDirs)).filter((file) => file.endsWith('.job'))).toEqual([]);
  },
  60_000,
);
