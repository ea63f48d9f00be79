import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { stages as stageRows } from '../../schemas/tables/stages.js';
import {
  closeGitHubAppDatabase,
  completedCheckRun,
  openGitHubAppDatabase,
  registerAcmeRunner,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { removeDir } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { finishedRun, serveSlurmRepo, startSlurmRunner } from './slurm-github-world.js';
import { firstLine, jobFields, startSlurm } from './slurm-job.js';

const exec = promisify(execFile);

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;

beforeAll(async () => {
  await startSlurm();
  await openGitHubAppDatabase();
}, 120_000);
afterAll(closeGitHubAppDatabase);
afterEach(async () => {
  await runner?.stop('SIGKILL');
  if (runner) await removeDir(runner.workDir);
  await world?.close();
  await repo?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
  runner = world = repo = scratch = undefined;
});

/** serveSlurmRepo, its repository and world closed after the test. */
async function serve(pipeline: string, env: Record<string, string> = {}) {
  const served = await serveSlurmRepo(pipeline, env);
  ({ repo, world } = served);
  return served;
}

test('/fluksio run through a Slurm runner: signed comment → control plane → Slurm jobs → a final check run naming each job and the run’s CPU- and GPU-hours', async () => {
  const pipeline = `version: 1
on:
  push: { branches: [main] }
resources: {cpus: 1, memory: 64MiB}
stages:
  prepare:
    cmd: echo "job $SLURM_JOB_ID" && sleep 2 && echo data > data.txt
    outs: [data.txt]
  train:
    cmd: echo "gpus $CUDA_VISIBLE_DEVICES" && sleep 2 && cat data.txt > model.txt
    deps: [data.txt]
    outs: [model.txt]
    resources: {gpus: 1, partition: gpu}
`;
  const { world: current, main } = await serve(pipeline);
  current.setHead(main);
  runner = await startSlurmRunner(current, await registerAcmeRunner(current, []));

  const comment = current.comment('/fluksio run');
  expect((await current.deliver(comment)).lastError).toBeNull();
  expect(current.reactions(comment.payload.comment.id)).toEqual(['eyes', 'rocket']);
  const run = await finishedRun(current, (candidate) => candidate.trigger === 'comment', runner);
  expect(run.status, runner.output()).toBe('succeeded');

  const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, run.id));
  const usage = Object.fromEntries(rows.map((row) => [row.name, row.usage]));
  expect(usage.prepare).toMatchObject({ source: 'allocation', gpuSeconds: 0 });
  expect(usage.train).toMatchObject({ source: 'allocation' });
  // Each job slept 2 s on one CPU; train's held one GPU as long.
  expect(usage.prepare?.cpuSeconds).toBeGreaterThanOrEqual(1);
  expect(usage.train?.gpuSeconds).toBeGreaterThanOrEqual(1);
  expect(usage.train?.gpuSeconds).toBe(usage.train?.cpuSeconds);
  expect(run.cpuSeconds).toBe((usage.prepare?.cpuSeconds ?? 0) + (usage.train?.cpuSeconds ?? 0));
  expect(run.gpuSeconds).toBe(usage.train?.gpuSeconds);
  const trainJob = await jobFields(usage.train?.job ?? '');
  expect(trainJob).toMatchObject({ JobState: 'COMPLETED', Partition: 'gpu', JobName: 'fluksio-train' });

  const checkRun = await completedCheckRun(current, run.id);
  expect(checkRun).toMatchObject({ name: 'fluksio', headSha: main, conclusion: 'success' });
  const summary = checkRun.output.summary ?? '';
  expect(summary).toMatch(
    /\*\*compute\*\* [0-9.]+ CPU-hours, [0-9.]+ GPU-hours \(Slurm jobs, every attempt\)/,
  );
  const text = checkRun.output.text ?? '';
  for (const name of ['prepare', 'train']) {
    expect(text).toContain(`Slurm job ${usage[name]?.job ?? '?'}: `);
  }
  expect(text).toContain('allocated CPUs and GPUs × elapsed time (the cluster keeps no accounting)');
  expect(current.double.violations).toEqual([]);
}, 150_000);

/**
 * A pipeline whose `train` stage appends its job id to `jobs` and then waits until a job
 * other than its own is listed there: its first job runs until something ends it, and the
 * next attempt's job finds the first one's id and finishes.
 */
function waitingPipeline(jobs: string, extra = ''): string {
  return `version: 1
on:
  push: { branches: [main] }
${extra}stages:
  prepare:
    cmd: echo data > data.txt
    outs: [data.txt]
  train:
    cmd: >-
      echo $SLURM_JOB_ID >> ${jobs} &&
      until grep -qvx "$SLURM_JOB_ID" ${jobs}; do sleep 0.2; done &&
      cat data.txt > model.txt
    deps: [data.txt]
    outs: [model.txt]
`;
}

test('a Slurm job requeued mid-run gives the run back (released, not failed, the cause named); the next attempt restores the finished stage from the cache', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-requeue-'));
  const pipeline = waitingPipeline(`${scratch}/jobs`);
  const { world: current, main } = await serve(pipeline);
  runner = await startSlurmRunner(current, await registerAcmeRunner(current, []));
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: main }));

  let job = '';
  await waitFor(
    'train’s first job to run',
    async () => (job = await firstLine(`${scratch}/jobs`)) !== '',
    60_000,
  );
  await exec('scontrol', ['requeue', job]);
  const run = await finishedRun(current, (candidate) => candidate.commit === main, runner);
  expect(run, runner.output()).toMatchObject({
    status: 'succeeded',
    attempt: 2,
    releases: 1,
    leaseExpirations: 0,
  });
  expect(runner.output()).toMatch(
    /"reason":"Stage train: Slurm requeued the job; queued again for another attempt"[^\n]*"msg":"run released"/,
  );
  expect(Number((await jobFields(job)).Restarts)).toBeGreaterThan(0);

  const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, run.id));
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  // prepare finished in attempt 1, so attempt 2 restored it: from this very run.
  expect(byName.prepare).toMatchObject({ status: 'cached', cachedFrom: run.id });
  expect(byName.train).toMatchObject({ status: 'ran' });
  expect(byName.train?.usage?.job).not.toBe(job);
  // The requeued job's time is counted too: the run's CPU-seconds cover both of train's jobs.
  expect(run.cpuSeconds).toBeGreaterThanOrEqual(byName.train?.usage?.cpuSeconds ?? 0);

  const checkRun = await completedCheckRun(current, run.id);
  expect(checkRun.conclusion).toBe('success');
  expect(checkRun.output.summary).toContain('(attempt 2)');
}, 180_000);

test('a Slurm runner killed with -9 mid-job and started again: the attempt it left is superseded, its job cancelled, and the run finishes', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-kill-'));
  const jobs = `${scratch}/jobs`;
  const { world: current, main } = await serve(waitingPipeline(jobs, 'retries: 1\n'), {
    FLUKSIO_LEASE_TTL: '3s',
    FLUKSIO_HEARTBEAT_INTERVAL: '500ms',
  });
  const token = await registerAcmeRunner(current, []);
  const first = await startSlurmRunner(current, token);
  runner = first;
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: main }));
  let job = '';
  await waitFor('train’s first job to run', async () => (job = await firstLine(jobs)) !== '', 60_000);
  await first.stop('SIGKILL');
  // Killed hard, the runner left its job running, and its id in the work directory.
  expect((await jobFields(job)).JobState).toBe('RUNNING');

  runner = await startSlurmRunner(current, token, first.workDir);
  const run = await finishedRun(current, (candidate) => candidate.commit === main, runner);
  expect(run, runner.output()).toMatchObject({ status: 'succeeded', attempt: 2, leaseExpirations: 1 });
  expect(runner.output()).toMatch(
    new RegExp(
      `"jobs":\\["${job}"\\][^\\n]*"msg":"cancelled the Slurm jobs of the run's superseded attempts"`,
    ),
  );
  await waitFor(
    'the superseded job to be cancelled',
    async () => (await jobFields(job)).JobState === 'CANCELLED',
  );
  const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, run.id));
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  expect(byName.prepare).toMatchObject({ status: 'cached', cachedFrom: run.id });
  expect(byName.train).toMatchObject({ status: 'ran' });
  // Over, the attempt's job files are gone from the work directory (removed once the runner
  // has reported the run's end).
  await waitFor(
    "the attempt's job files to be removed",
    async () => (await readdir(join(first.workDir, 'slurm'))).length === 0,
  );
}, 180_000);
