import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { stages as stageRows } from '../../schemas/tables/stages.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { registerAcmeRunner, waitFor, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { fakeCalls, fakeCommand, INVALID_JOB, realCommand } from './fake-slurm.js';
import { finishedRun, serveSlurmRepo, useSlurmGitHubWorld } from './slurm-github-world.js';
import { accountedJob, firstLine } from './slurm-job.js';

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;

useSlurmGitHubWorld(() => {
  const left = { runner, world, repo, scratch };
  runner = world = repo = scratch = undefined;
  return left;
});

test('a Slurm job that ended while its runner was down and left slurmctld (squeue and scontrol no longer know it): the restarted runner reads its end from the accounting and keeps its work, never submitting it again', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-gone-'));
  const jobs = `${scratch}/jobs`;
  const go = `${scratch}/go`;
  const served = await serveSlurmRepo(`version: 1
on:
  push: { branches: [main] }
stages:
  train:
    cmd: >-
      echo $SLURM_JOB_ID >> ${jobs} &&
      until [ -e ${go} ]; do sleep 0.2; done &&
      echo "trained in job $SLURM_JOB_ID" && echo model > model.txt
    outs: [model.txt]
`);
  ({ repo, world } = served);
  const current = served.world;
  const token = await registerAcmeRunner(current, []);
  // Slurm's commands behind stand-ins (fake-slurm.ts), the real ones for now: the runners'
  // PATH, which stages get, stays the same across the restart.
  const shims = join(scratch, 'shims');
  await mkdir(shims);
  const real = async (name: string) => fakeCommand(shims, name, [{ real: await realCommand(name) }]);
  for (const name of ['squeue', 'scontrol', 'sacct', 'sbatch', 'scancel']) await real(name);
  const start = (workDir?: string) =>
    startRunnerProcess({
      url: current.plane.url,
      token,
      args: ['--backend', 'slurm'],
      ...(workDir ? { workDir } : {}),
      env: { GIT_SSL_CAINFO: current.double.caFile ?? '', PATH: `${shims}:${process.env.PATH ?? ''}` },
    });
  const first = await start();
  runner = first;
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: served.main }));
  let job = '';
  await waitFor('train’s job to run', async () => (job = await firstLine(jobs)) !== '', 60_000);
  const [queued] = await current.runs();
  const runId = queued?.id ?? '';
  const trainRow = async () =>
    (
      await current.db
        .select()
        .from(stageRows)
        .where(and(eq(stageRows.runId, runId), eq(stageRows.name, 'train')))
    )[0];
  await waitFor('train’s start to be stored', async () => (await trainRow())?.status === 'running', 60_000);
  await first.stop('SIGKILL');

  // The job ends while no runner follows it, and its end reaches the accounting.
  await writeFile(go, '');
  expect(await accountedJob(job, ['ExitCode'])).toMatchObject({ State: 'COMPLETED', ExitCode: '0:0' });
  // slurmctld then forgets it (MinJobAge passed): squeue and scontrol say it is unknown,
  // as they do for a purged job; sacct, sbatch and scancel stay the real ones.
  await fakeCommand(shims, 'squeue', [INVALID_JOB]);
  await fakeCommand(shims, 'scontrol', [INVALID_JOB]);
  const before = (await fakeCalls(shims)).length;

  runner = await start(first.workDir);
  const run = await finishedRun(current, (candidate) => candidate.id === runId, runner);
  expect(run, runner.output()).toMatchObject({ status: 'succeeded', attempt: 1, leaseEpoch: 1 });
  // One job for train: its end was read from the accounting, never a second sbatch.
  expect((await readFile(jobs, 'utf8')).trim().split('\n')).toEqual([job]);
  expect((await fakeCalls(shims)).slice(before).filter((call) => call.startsWith('sbatch '))).toEqual([]);
  expect(await trainRow()).toMatchObject({ status: 'ran', usage: { job } });
  expect(await getStageLog({ db: current.db, runId, stage: 'train' })).toContain(`trained in job ${job}`);
  const slot = join(first.workDir, 'checkouts', '0');
  const models = (await readdir(slot)).map((name) => join(slot, name, 'model.txt')).filter(existsSync);
  expect(await Promise.all(models.map((file) => readFile(file, 'utf8')))).toEqual(['model\n']);
}, 240_000);
