import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

test('the local backend ignores the resources it cannot apply and refuses GPUs it lacks, saying which', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
resources: {memory: 1GiB}
stages:
  small:
    cmd: echo ok > small.txt
    outs: [small.txt]
    resources: {cpus: 2, time: 1h}
  big:
    cmd: echo never > big.txt
    outs: [big.txt]
    resources: {gpus: 64}
`,
    },
  });
  const { report } = await runJson([], { cwd: repo.dir });
  expect(stageOf(report, 'small')).toMatchObject({ status: 'ran' });
  expect(stageOf(report, 'small').warnings).toEqual([
    'stage small: resources.cpus, resources.memory, resources.time ignored: this backend runs stages on this machine without limits (they apply with --backend slurm)',
  ]);
  expect(stageOf(report, 'big').status).toBe('failed');
  expect(stageOf(report, 'big').error).toMatch(
    /^resources\.gpus: stage big asks for 64 GPU\(s\) and this machine has \d+; run it on a cluster \(--backend slurm\)$/,
  );
});
