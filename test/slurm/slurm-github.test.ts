import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { and, asc, eq } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { stages as stageRows } from '../../schemas/tables/stages.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import {
  completedCheckRun,
  registerAcmeRunner,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { finishedRun, serveSlurmRepo, startSlurmRunner, useSlurmGitHubWorld } from './slurm-github-world.js';
import { accountedJob, firstLine, jobFields } from './slurm-job.js';

const exec = promisify(execFile);

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;

useSlurmGitHubWorld(() => {
  const left = { runner, world, repo, scratch };
  runner = world = repo = scratch = undefined;
  return left;
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
  expect(usage.prepare).toMatchObject({ source: 'sacct', gpuSeconds: 0 });
  expect(usage.train).toMatchObject({ source: 'sacct' });
  // Each job slept 2 s on one CPU; train's held one GPU as long.
  expect(usage.prepare?.cpuSeconds).toBeGreaterThanOrEqual(1);
  expect(usage.train?.gpuSeconds).toBeGreaterThanOrEqual(1);
  expect(usage.train?.gpuSeconds).toBe(usage.train?.cpuSeconds);
  expect(run.cpuSeconds).toBe((usage.prepare?.cpuSeconds ?? 0) + (usage.train?.cpuSeconds ?? 0));
  expect(run.gpuSeconds).toBe(usage.train?.gpuSeconds);
  // The figures are the accounting's own: CPUTimeRAW, and one GPU × ElapsedRaw.
  const trainJob = await accountedJob(usage.train?.job ?? '', [
    'Partition',
    'JobName',
    'ElapsedRaw',
    'CPUTimeRAW',
  ]);
  expect(trainJob).toMatchObject({
    State: 'COMPLETED',
    Partition: 'gpu',
    JobName: 'fluksio-train',
    CPUTimeRAW: String(usage.train?.cpuSeconds),
    ElapsedRaw: String(usage.train?.gpuSeconds),
  });

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
  expect(text).toContain("(from the cluster's accounting (sacct))");
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

test('a Slurm runner killed with -9 mid-job and started again resumes the run in the same attempt: it re-attaches to the job still running, and the run succeeds with every event stored once', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-kill-'));
  const jobs = `${scratch}/jobs`;
  const go = `${scratch}/go`;
  // The default lease TTL (90 s) and no retries: only a resume in the same attempt saves the run.
  const { world: current, main } = await serve(`version: 1
on:
  push: { branches: [main] }
stages:
  prepare:
    cmd: echo "preparing" && echo data > data.txt
    outs: [data.txt]
  train:
    cmd: >-
      echo "job $SLURM_JOB_ID started" &&
      echo $SLURM_JOB_ID >> ${jobs} &&
      echo "epoch 1" > model.txt &&
      until [ -e ${go} ]; do sleep 0.2; done &&
      echo "job $SLURM_JOB_ID done" &&
      cat data.txt >> model.txt
    deps: [data.txt]
    outs: [model.txt]
`);
  const token = await registerAcmeRunner(current, []);
  const first = await startSlurmRunner(current, token);
  runner = first;
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: main }));
  let job = '';
  await waitFor('train’s job to run', async () => (job = await firstLine(jobs)) !== '', 60_000);
  const [queued] = await current.runs();
  const runId = queued?.id ?? '';
  const trainLog = async () => (await getStageLog({ db: current.db, runId, stage: 'train' })) ?? [];
  // Killed once prepare's end and train's first line are stored: the resumed runner continues after them.
  await waitFor(
    'prepare to be recorded and train’s first line stored',
    async () => {
      const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, runId));
      const prepared = rows.some((row) => row.name === 'prepare' && row.status === 'ran');
      return prepared && (await trainLog()).includes(`job ${job} started`);
    },
    60_000,
  );
  const [prepared] = await current.db
    .select()
    .from(stageRows)
    .where(and(eq(stageRows.runId, runId), eq(stageRows.name, 'prepare')));
  const prepareLog = await getStageLog({ db: current.db, runId, stage: 'prepare' });
  expect(prepareLog).toContain('preparing');
  await first.stop('SIGKILL');
  // Killed hard, the runner left its job running, and what it needs to resume in its work directory.
  expect((await jobFields(job)).JobState).toBe('RUNNING');
  expect(await readdir(join(first.workDir, 'held-runs'))).toEqual([`${runId}.json`]);

  runner = await startSlurmRunner(current, token, first.workDir);
  await runner.waitFor(
    new RegExp(`"msg":"resumed the run in attempt 1, re-attaching to Slurm job ${job}"`),
    60_000,
  );
  await waitFor(
    'train to re-attach to its job',
    async () => (await trainLog()).includes(`fluksio: re-attached to Slurm job ${job}`),
    60_000,
  );
  await writeFile(go, '');
  const run = await finishedRun(current, (candidate) => candidate.id === runId);
  expect(run, runner.output()).toMatchObject({
    status: 'succeeded',
    attempt: 1,
    leaseExpirations: 0,
    releases: 0,
    // Resumed once: the restarted runner's writes carried the lease's new epoch.
    leaseEpoch: 1,
  });
  // One job for train, finished: never a second sbatch.
  expect((await readFile(jobs, 'utf8')).trim().split('\n')).toEqual([job]);
  expect((await jobFields(job)).JobState).toBe('COMPLETED');
  const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, runId));
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  // prepare finished before the kill: its record (ran, with its job's usage) and its log stand.
  expect(byName.prepare).toMatchObject({ status: 'ran', usage: { job: expect.any(String) } });
  expect(byName.prepare).toEqual(prepared);
  expect(await getStageLog({ db: current.db, runId, stage: 'prepare' })).toEqual(prepareLog);
  expect(byName.train).toMatchObject({ status: 'ran', usage: { job } });
  // What the job wrote before the runner died was left to it, not removed as a fresh launch's outs are.
  const slot = join(first.workDir, 'checkouts', '0');
  const models = (await readdir(slot)).map((name) => join(slot, name, 'model.txt')).filter(existsSync);
  expect(await Promise.all(models.map((file) => readFile(file, 'utf8')))).toEqual(['epoch 1\ndata\n']);

  // Every event once: the attempt's seqs without a gap or a repeat, each line of the job once.
  const applied = await current.db
    .select({ seq: appliedEvents.seq })
    .from(appliedEvents)
    .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, 1)))
    .orderBy(asc(appliedEvents.seq));
  expect(applied.map((row) => row.seq)).toEqual(applied.map((_, index) => index));
  const log = await trainLog();
  expect(log.filter((line) => line === `job ${job} started`)).toHaveLength(1);
  expect(log.filter((line) => line === `job ${job} done`)).toHaveLength(1);
  expect(log.some((line) => line.includes('submitted Slurm job'))).toBe(false);

  const checkRun = await completedCheckRun(current, runId);
  expect(checkRun.conclusion).toBe('success');
  expect(checkRun.output.summary).not.toContain('(attempt 2)');
  // Over, nothing of the run is left in the work directory.
  await waitFor(
    'the run’s job files and its held-run record to be removed',
    async () => {
      const left = [
        ...(await readdir(join(first.workDir, 'slurm'))),
        ...(await readdir(join(first.workDir, 'held-runs'))),
      ];
      return left.length === 0;
    },
    30_000,
  );
}, 180_000);

test('a Slurm runner started again after its run’s lease was swept is refused the resume: it cancels the job it left, and the next attempt (retries: 1) finishes', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-swept-'));
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
  await waitFor(
    'the sweeper to take the run back',
    async () => {
      const [swept] = await current.runs();
      return swept?.leaseExpirations === 1 && swept.status === 'queued';
    },
    30_000,
  );
  // The job of the swept attempt still runs: only the runner's work directory knows it.
  expect((await jobFields(job)).JobState).toBe('RUNNING');

  runner = await startSlurmRunner(current, token, first.workDir);
  const run = await finishedRun(current, (candidate) => candidate.commit === main, runner);
  expect(run, runner.output()).toMatchObject({ status: 'succeeded', attempt: 2, leaseExpirations: 1 });
  expect(runner.output()).toMatch(
    new RegExp(`"msg":"the run is not resumed; its Slurm job ${job} cancelled"`),
  );
  await waitFor(
    'the job left to be cancelled',
    async () => (await jobFields(job)).JobState === 'CANCELLED',
    30_000,
  );
  const rows = await current.db.select().from(stageRows).where(eq(stageRows.runId, run.id));
  const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
  expect(byName.prepare).toMatchObject({ status: 'cached', cachedFrom: run.id });
  expect(byName.train).toMatchObject({ status: 'ran' });
  expect(byName.train?.usage?.job).not.toBe(job);
  await waitFor(
    'the attempts’ job files and the held-run record to be removed',
    async () => {
      const left = [
        ...(await readdir(join(first.workDir, 'slurm'))),
        ...(await readdir(join(first.workDir, 'held-runs'))),
      ];
      return left.length === 0;
    },
    30_000,
  );
}, 180_000);
