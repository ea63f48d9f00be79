import { existsSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { readFileInside } from '../workspace/read-file-inside.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { formatProblems } from '../../core/problem.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { resolveTypedParams, type Params } from '../../core/params/resolve-params.js';
import type { Stamp } from '../../schemas/stamp.js';
import { loadProjectPipeline } from '../../core/dvc/load-project-pipeline.js';
import { checkWorkspacePaths } from '../workspace/check-workspace-paths.js';
import { readCodeIndex, type CodeIndex } from '../keys/code-index.js';
import { computeStamp } from '../keys/compute-stamp.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import type { Workspace } from '../workspace/workspace.js';
import { runEnvironment, type RunEnvironment } from './run-environment.js';

/** A claimed run ready for the engine: everything checked at the claimed commit. */
export interface PreparedRun extends RunEnvironment {
  workspace: Workspace;
  /** The pipeline at the commit, its timeout no longer than the run's. */
  pipeline: Pipeline;
  params: Params;
  codeIndex: CodeIndex;
  stamp: Stamp;
}

/**
 * Reads the claimed run's pipeline in the verified checkout and checks it as
 * `fluksio run` would (DESIGN §3, §4, §10): the pipeline file with every problem at once,
 * paths that would leave the workspace through a symlink, and the claimed params
 * against this commit's declarations. Then reads the code index and computes the
 * stamp, with the environment the run's trust allows. Throws an error naming every
 * problem: the run fails with it as its reason, nothing having run.
 */
export async function prepareClaimedRun(options: {
  repoRoot: string;
  claim: Claim;
  runnerEnvironment: Readonly<Record<string, string | undefined>>;
  secrets: Readonly<Record<string, string>>;
  /**
   * The checkout's stat cache, kept outside it: `git clean` empties the checkout of
   * everything untracked before each run, `.fluksio/` included.
   * @defaultValue `<repoRoot>/.fluksio/code-stat-cache`
   */
  statCacheFile?: string | null;
}): Promise<PreparedRun> {
  const { repoRoot, claim } = options;
  const { pipelinePath } = claim.run;
  const at = `at commit ${claim.commit}`;
  let file: string;
  try {
    file = await resolveWorkspacePath(repoRoot, pipelinePath);
  } catch (error) {
    throw new Error(`The pipeline path "${pipelinePath}" is refused: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    const why =
      error.code === 'ENOENT' ? 'does not exist' : error.code === 'EISDIR' ? 'is a directory' : error.message;
    throw new Error(`The pipeline file ${pipelinePath} ${why} ${at}`);
  });
  const pipelineDir = await realpath(path.dirname(file));
  const pipelineDirInRepo = path.relative(repoRoot, pipelineDir).split(path.sep).join('/');
  const workspace: Workspace = { repoRoot, pipelineDir, pipelineDirInRepo };

  const validation = loadProjectPipeline({
    file: pipelinePath,
    text,
    pipelineDir: pipelineDirInRepo,
    exists: (repoPath) => existsSync(path.join(repoRoot, repoPath)),
    readFile: (name) => readFileInside(repoRoot, path.resolve(pipelineDir, name)),
  });
  if (!validation.pipeline) {
    throw new Error(
      `${pipelinePath} ${at} is not valid:\n${formatProblems(validation.problems, pipelinePath)}`,
    );
  }
  const checked = resolveTypedParams(validation.pipeline.params, claim.run.params);
  const pathProblems = await checkWorkspacePaths(validation.pipeline, workspace);
  if (checked.params === null || pathProblems.length > 0) {
    throw new Error(
      [formatProblems(checked.problems), formatProblems(pathProblems, pipelinePath)]
        .filter(Boolean)
        .join('\n'),
    );
  }
  // The run's own limit counts too; the control plane enforces it as well, by heartbeat.
  const pipeline = {
    ...validation.pipeline,
    timeout: Math.min(validation.pipeline.timeout, claim.run.timeoutMs),
  };
  const environment = runEnvironment({
    fork: claim.repo.fork,
    runnerEnvironment: options.runnerEnvironment,
    secrets: options.secrets,
  });
  // The run's stages could write the checkout's `.git` and make repositories in it: the
  // runner's own reads after them must run nothing those name.
  const codeIndex = await readCodeIndex(repoRoot, {
    ...(options.statCacheFile === undefined ? {} : { statCacheFile: options.statCacheFile }),
    distrustRepositoryConfig: true,
  });
  const stamp = computeStamp({
    workspace,
    pipeline,
    params: checked.params,
    codeIndex,
    environment: environment.environment,
  });
  return { workspace, pipeline, params: checked.params, codeIndex, stamp, ...environment };
}
