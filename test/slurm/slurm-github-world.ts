import type { Run } from '../../schemas/tables/runs.js';
import { openGitHubAppWorld, waitFor, type GitHubAppWorld } from '../app-github/github-app-fixture.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

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
