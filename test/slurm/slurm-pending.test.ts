import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, test } from 'vitest';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { hashToken } from '../../app/http/hash-token.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import {
  completedCheckRun,
  registerAcmeRunner,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { finishedRun, serveSlurmRepo, startSlurmRunner, useSlurmGitHubWorld } from './slurm-github-world.js';

const exec = promisify(execFile);

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;
let blocker: string | undefined;

useSlurmGitHubWorld(() => {
  const left = { runner, world, repo, scratch };
  runner = world = repo = scratch = undefined;
  return left;
});
// Registered after the world's hooks, so run before them.
afterEach(async () => {
  if (blocker) await exec('scancel', [blocker]).catch(() => {});
  blocker = undefined;
});

/** What `squeue` says a job waits for, or null once it no longer waits. */
async function squeueReason(job: string): Promise<string | null> {
  const { stdout } = await exec('squeue', ['--noheader', '--states=PD', '--jobs', job, '--format=%r']).catch(
    () => ({ stdout: '' }),
  );
  return stdout.trim() || null;
}

/** `⏳ pending: Resources (Slurm job 12)` in a row of the stages table, unescaped. */
const PENDING_CELL = /^\| train \| .* \| ⏳ pending: (.+) \(Slurm job (\d+)\) \|$/m;

test('a job pending in Slurm shows why, with its id, on the in-progress check run and in the run’s report, until it runs', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-pending-'));
  const go = join(scratch, 'go');
  const pipeline = `version: 1
stages:
  train:
    cmd: until [ -e ${go} ]; do sleep 0.2; done; echo trained > model.txt
    outs: [model.txt]
    resources: {gpus: 1, partition: gpu}
`;
  const served = await serveSlurmRepo(pipeline);
  ({ repo, world } = served);
  const current = served.world;
  current.setHead(served.main);
  const readToken = randomBytes(32).toString('hex');
  await createApiToken({
    db: current.db,
    name: 'reader',
    repositories: [current.repo.fullName],
    scope: 'read',
    tokenHash: hashToken(readToken),
  });
  const report = async (runId: string): Promise<RemoteRunReport> => {
    const response = await fetch(`${current.plane.url}/api/v1/runs/${runId}`, {
      headers: { authorization: `Bearer ${readToken}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as RemoteRunReport;
  };
  const checkRunOf = (runId: string) =>
    current.double.checkRuns(current.repo.fullName).find((candidate) => candidate.externalId === runId);

  // Both of the node's GPUs held by another job: the stage's job (one GPU) waits for them.
  const { stdout } = await exec('sbatch', [
    '--parsable',
    '--partition=gpu',
    '--gpus=2',
    '--job-name=fluksio-test-gpu-holder',
    '--output=/dev/null',
    '--wrap=sleep 600',
  ]);
  blocker = stdout.trim().split(';')[0];
  await waitFor(
    'the GPU holder to run',
    async () => (await exec('squeue', ['-h', '-j', blocker ?? '', '-o', '%T'])).stdout.trim() === 'RUNNING',
    60_000,
  );

  runner = await startSlurmRunner(current, await registerAcmeRunner(current, []));
  expect((await current.deliver(current.comment('/fluksio run'))).lastError).toBeNull();
  const run = await waitFor('the run to be queued', async () =>
    (await current.runs()).find((candidate) => candidate.trigger === 'comment'),
  );

  // What the check run shows is what squeue says, read at the same moment.
  const shown = await waitFor(
    'the check run to show why the job waits, as squeue says it',
    async () => {
      const checkRun = checkRunOf(run.id);
      const [, escaped = '', job = ''] = PENDING_CELL.exec(checkRun?.output.summary ?? '') ?? [];
      const reason = escaped.replace(/\\(.)/g, '$1');
      return checkRun?.status === 'in_progress' && job !== '' && reason === (await squeueReason(job))
        ? { job, reason, checkRun }
        : undefined;
    },
    60_000,
  ).catch((error: Error) => {
    throw new Error(
      `${error.message}\n${checkRunOf(run.id)?.output.summary ?? '(no check run)'}\n${runner?.output() ?? ''}`,
    );
  });
  expect(['Resources', 'Priority']).toContain(shown.reason);
  expect(shown.checkRun.output.text).toContain(`- pending: ${shown.reason} (Slurm job ${shown.job})`);
  const waiting = await report(run.id);
  expect(waiting.run.status).toBe('running');
  expect(waiting.stages.find((stage) => stage.name === 'train')).toMatchObject({
    status: 'running',
    pending: { job: shown.job, reason: await squeueReason(shown.job) },
  });

  // The GPUs freed, the job runs: the check run and the report no longer say it waits.
  await exec('scancel', [blocker ?? '']);
  await waitFor(
    'the in-progress check run to stop saying the job waits',
    async () => {
      const checkRun = checkRunOf(run.id);
      const summary = checkRun?.output.summary ?? '';
      return (
        checkRun?.status === 'in_progress' && /^\| train \| /m.test(summary) && !summary.includes('pending:')
      );
    },
    60_000,
  );
  expect((await report(run.id)).stages.find((stage) => stage.name === 'train')?.pending).toBeNull();
  expect(await squeueReason(shown.job)).toBeNull();

  await writeFile(go, '');
  const finished = await finishedRun(current, (candidate) => candidate.id === run.id, runner);
  expect(finished.status, runner.output()).toBe('succeeded');
  const final = await completedCheckRun(current, run.id);
  expect(final.conclusion).toBe('success');
  expect(final.output.summary).not.toContain('pending:');
  expect(current.double.violations).toEqual([]);
}, 180_000);
