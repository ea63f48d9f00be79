import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatProblems } from '../core/problem.js';
import type { Pipeline } from '../schemas/pipeline.js';
import { resolveParams, type Params } from '../core/params/resolve-params.js';
import { checkWorkspacePaths } from '../runner/workspace/check-workspace-paths.js';
import { locateProject, readProjectPipeline, type LocalProject } from '../local/locate-project.js';
import { UsageError } from '../present/terminal/usage-error.js';
import type { ActionInputs } from './input-helper.js';

/** The pipeline the inputs name, read and validated, and the runs its params make. */
export interface CheckedPipelineInputs {
  project: LocalProject;
  pipeline: Pipeline;
  /** One parameter set per run: one for a plain run, the grid for a sweep. */
  grid: Params[];
  /** The keys a sweep varies, which name its check runs. */
  swept: string[];
}

/**
 * Reads the `pipeline` input's file from the workspace and types the `params` input
 * against it, before anything runs or is submitted. Every problem is a sentence naming
 * the input it is about: `Input 'params': Parameter 'lr': "fast" is not a float…`.
 */
export async function readPipelineInputs(inputs: ActionInputs): Promise<CheckedPipelineInputs> {
  const { workspace } = inputs.workflow;
  if (!existsSync(resolve(workspace, inputs.pipeline))) {
    throw new Error(
      `Input 'pipeline': ${inputs.pipeline} does not exist in the workspace ${workspace} (check the repository out first, with actions/checkout)`,
    );
  }
  const project = await asInputError('pipeline', () => locateProject(inputs.pipeline, workspace));
  const pipeline = await asInputError('pipeline', () => readProjectPipeline(project));
  const resolved = resolveParams(pipeline.params, inputs.params);
  if (resolved.problems.length > 0) {
    throw new Error(
      resolved.problems.map((problem) => `Input 'params': ${formatProblems([problem])}`).join('\n'),
    );
  }
  const pathProblems = await checkWorkspacePaths(pipeline, project.workspace);
  if (pathProblems.length > 0) {
    throw new Error(`Input 'pipeline': ${formatProblems(pathProblems, project.displayPath)}`);
  }
  return { project, pipeline, grid: resolved.grid, swept: resolved.swept };
}

/** The CLI's usage errors, as a sentence about the action's input instead of a flag. */
async function asInputError<T>(input: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UsageError) throw new Error(`Input '${input}': ${error.message}`, { cause: error });
    throw error;
  }
}
