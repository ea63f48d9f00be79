import { rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Run } from '../../schemas/tables/runs.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  waitFor,
  type GitHubAppWorld,
} from '../app-github/github-app-fixture.js';
import { removeDir, startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { startSlurm } from './slurm-job.js';

/** A GitHub double serving a repository whose main commit carries `pipeline`, and its control plane. */
export interface SlurmGitHubWorld {
  repo: TestRepo;
  world: GitHubAppWorld;
  /** The commit the double serves as main (and, once set, as the pull request's head). */
  main: string;
}

/** A repository whose commits the double serves over HTTPS, with its pipeline at each commit. */
export async function serveSlurmRepo(
  pipeline: string,
  env: Record<string, string> = {},
): Promise<SlurmGitHubWorld> {
  const repo = await makeRepo({ files: { 'fluksio.yml': pipeline, '.gitignore': '*.txt\n' } });
  const main = (await repo.git('rev-parse', 'HEAD')).trim();
  const world = await openGitHubAppWorld({ serve: repo.dir, env });
  world.double.setFile(world.repo.fullName, main, 'fluksio.yml', pipeline);
  world.double.setCommits(world.repo.fullName, [main], { branch: 'main' });
  return { repo, world, main };
}

/** A `fluksio runner --backend slurm` process for the world's runner token. */
export function startSlurmRunner(
  world: GitHubAppWorld,
  token: string,
  workDir?: string,
): Promise<FluksioProcess & { workDir: string }> {
  return startRunnerProcess({
    url: world.plane.url,
    token,
    args: ['--backend', 'slurm'],
    ...(workDir ? { workDir } : {}),
    env: { GIT_SSL_CAINFO: world.double.caFile ?? '' },
  });
}

/** The first run `which` picks once it finished; a timeout names the runner's output. */
export async function finishedRun(
  world: GitHubAppWorld,
  which: (run: Run) => boolean,
  runner?: FluksioProcess,
): Promise<Run> {
  return waitFor(
    'the run to finish',
    async () => {
      const found = (await world.runs()).find(which);
      return found && found.finishedAt !== null && found;
    },
    90_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${runner?.output() ?? ''}`);
  });
}

/** What a Slurm test against the GitHub double may leave behind when it ends. */
export interface SlurmTestLeftovers {
  runner?: (FluksioProcess & { workDir: string }) | undefined;
  front?: Server | undefined;
  world?: GitHubAppWorld | undefined;
  repo?: TestRepo | undefined;
  scratch?: string | undefined;
}

/**
 * The hooks of a test file whose tests run a Slurm runner against the GitHub double: Slurm
 * started and the app's database opened once, and after each test what `take` hands over
 * (and forgets) is ended in turn: the runner killed and its work directory removed, the
 * front closed, the world closed, the repository and the scratch folder removed.
 */
export function useSlurmGitHubWorld(take: () => SlurmTestLeftovers): void {
  beforeAll(async () => {
    await startSlurm();
    await openGitHubAppDatabase();
  }, 120_000);
  afterAll(closeGitHubAppDatabase);
  afterEach(async () => {
    const { runner, front, world, repo, scratch } = take();
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await new Promise((resolve) => (front ? front.close(resolve) : resolve(undefined)));
    await world?.close();
    await repo?.cleanup();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });
}
