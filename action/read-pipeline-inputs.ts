import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatProblems } from '../core/problem.js';
import type { Pipeline } from '../schemas/pipeline.js';
import { resolveParams, type Params } from '../core/params/resolve-params.js';
import { checkWorkspacePaths } from '../runner/workspace/check-workspace-paths.js';
import { locateProject, readProjectSource, type LocalProject } from '../local/locate-project.js';
import { UsageError } from '../present/terminal/usage-error.js';
import { PROJECT_PIPELINE_FILES } from '../core/dvc/load-project-pipeline.js';
import type { ActionInputs } from './input-helper.js';

/** The pipeline the inputs name, read and validated, and the runs its params make. */
export interface CheckedPipelineInputs {
  project: LocalProject;
  pipeline: Pipeline;
  /** What of a `dvc.yaml` cannot be honoured, each naming its stage; the other stages run. */
  notes: string[];
  /** One parameter set per run: one for a plain run, the grid for a sweep. */
  grid: Params[];
  /** The keys a sweep varies, which name its check runs. */
  swept: string[];
}

/**
 * Reads the `pipeline` input's file (or, without one, `fluksio.yml`, else `dvc.yaml`) from
 * the workspace with the loader `fluksio run` uses, and types the `params` input
 * against it, before anything runs or is submitted. Every problem is a sentence naming
 * the input it is about: `Input 'params': Parameter 'lr': "fast" is not a float…`.
 */
export async function readPipelineInputs(inputs: ActionInputs): Promise<CheckedPipelineInputs> {
  const { workspace } = inputs.workflow;
  const checkOut = 'check the repository out first, with actions/checkout';
  if (inputs.pipeline !== null && !existsSync(resolve(workspace, inputs.pipeline))) {
    throw new Error(
      `Input 'pipeline': ${inputs.pipeline} does not exist in the workspace ${workspace} (${checkOut})`,
    );
  }
  if (
    inputs.pipeline === null &&
    !PROJECT_PIPELINE_FILES.some((file) => existsSync(resolve(workspace, file)))
  ) {
    throw new Error(
      `Input 'pipeline': neither ${PROJECT_PIPELINE_FILES.join(' nor ')} is in the workspace ${workspace} (${checkOut}, or name the pipeline file)`,
    );
  }
  // Found as `fluksio run` finds it: fluksio.yml, else a DVC project's dvc.yaml.
  const project = await asInputError('pipeline', () =>
    locateProject(inputs.pipeline ?? undefined, workspace),
  );
  const { pipeline, notes } = await asInputError('pipeline', () => readProjectSource(project));
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
  return { project, pipeline, notes, grid: resolved.grid, swept: resolved.swept };
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
