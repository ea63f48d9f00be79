import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, test } from 'vitest';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { registerAcmeRunner, waitFor, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { finishedRun, serveSlurmRepo, useSlurmGitHubWorld } from './slurm-github-world.js';
import { firstLine, jobFields } from './slurm-job.js';

const run = promisify(execFile);

let repo: TestRepo | undefined;
let world: GitHubAppWorld | undefined;
let runner: (FluksioProcess & { workDir: string }) | undefined;
let scratch: string | undefined;
let sampling = false;

useSlurmGitHubWorld(() => {
  const left = { runner, world, repo, scratch };
  runner = world = repo = scratch = undefined;
  return left;
});
// Registered after the world's hooks, so run before them.
afterEach(async () => {
  sampling = false;
});

/** The jobs squeue lists, not over, whose comment starts with `prefix`. */
async function liveJobs(prefix: string): Promise<string[]> {
  const { stdout } = await run('squeue', ['--noheader', '--states=PD,R,CG,CF,S', '--format=%i|%k']);
  return stdout
    .split('\n')
    .filter((line) => line.slice(line.indexOf('|') + 1).startsWith(prefix))
    .map((line) => line.slice(0, line.indexOf('|')));
}

test('a runner killed mid-job and restarted with a PATH that changes the stage’s key cancels the job it no longer re-attaches to before submitting the stage: never two jobs of the stage at once', async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-slurm-new-key-'));
  const jobs = `${scratch}/jobs`;
  const go = `${scratch}/go`;
  // The stage's program, found on the runner's PATH; the restarted runner finds another
  // version of it first, which keys the stage anew (its interpreter's digest).
  const tool = async (version: string) => {
    const dir = join(scratch as string, version);
    await mkdir(dir);
    await writeFile(
      join(dir, 'train-step'),
      `#!/bin/sh
# ${version}
echo "$SLURM_JOB_ID" >> "$1"
until [ -e "$2" ]; do sleep 0.2; done
echo "trained in job $SLURM_JOB_ID by ${version}" && echo model > model.txt
`,
    );
    await chmod(join(dir, 'train-step'), 0o755);
    return dir;
  };
  const [v1, v2] = [await tool('v1'), await tool('v2')];
  const served = await serveSlurmRepo(`version: 1
on:
  push: { branches: [main] }
stages:
  train:
    cmd: train-step ${jobs} ${go}
    outs: [model.txt]
`);
  ({ repo, world } = served);
  const current = served.world;
  const token = await registerAcmeRunner(current, []);
  const start = (path: string, workDir?: string) =>
    startRunnerProcess({
      url: current.plane.url,
      token,
      args: ['--backend', 'slurm'],
      ...(workDir ? { workDir } : {}),
      env: { GIT_SSL_CAINFO: current.double.caFile ?? '', PATH: `${path}:${process.env.PATH ?? ''}` },
    });
  const first = await start(v1);
  runner = first;
  await current.deliver(pushPayload({ repo: current.repo, ref: 'main', after: served.main }));
  let job = '';
  await waitFor('train’s job to run', async () => (job = await firstLine(jobs)) !== '', 60_000);
  const [queued] = await current.runs();
  const runId = queued?.id ?? '';
  const prefix = `fluksio:${runId}:train:`;
  expect((await jobFields(job)).Comment ?? '').toMatch(new RegExp(`^${prefix}`));

  // squeue sampled from now to the run's end: the stage's jobs alive at once.
  const crowded: string[][] = [];
  sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const live = await liveJobs(prefix);
      if (live.length > 1) crowded.push(live);
      await new Promise((wake) => setTimeout(wake, 100));
    }
  })();

  await first.stop('SIGKILL');
  runner = await start(`${v2}:${v1}`, first.workDir);
  let second = '';
  await waitFor(
    'train’s job to run again',
    async () => (second = (await readFile(jobs, 'utf8')).trim().split('\n')[1] ?? '') !== '',
    60_000,
  );
  await writeFile(go, '');
  const finished = await finishedRun(current, (candidate) => candidate.id === runId, runner);
  sampling = false;
  await sampler;

  expect(finished, runner.output()).toMatchObject({ status: 'succeeded', attempt: 1 });
  expect(crowded).toEqual([]);
  expect(second).not.toBe(job);
  expect((await jobFields(job)).JobState).toBe('CANCELLED');
  const log = (await getStageLog({ db: current.db, runId, stage: 'train' }))?.join('\n') ?? '';
  expect(log).toContain(`fluksio: cancelling Slurm job ${job} (RUNNING, comment ${prefix}`);
  expect(log).toContain(`trained in job ${second} by v2`);
}, 240_000);
