import { parseAssignmentArgs } from '../../core/params/param-assignments.js';
import { resolveParams, type Params } from '../../core/params/resolve-params.js';
import type { ParsedPipelineText } from '../../core/pipeline/validate-pipeline.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { readProjectSource, type LocalProject } from '../../local/locate-project.js';
import { problemsError } from '../../present/terminal/usage-error.js';
import { checkWorkspacePaths } from '../../runner/workspace/check-workspace-paths.js';
import {
  splitStageArguments,
  stageRequest,
  type StageRequest,
  type StageRequestOptions,
} from './stage-request.js';

export interface CheckedRunInput {
  pipeline: Pipeline;
  /** One parameter set per run: one for a plain run, the grid for a sweep. */
  grid: Params[];
  /** What a translated dvc.yaml could not honour, each naming its stage. */
  notes: string[];
  /** The stages asked for (`fluksio run train --downstream --force`). */
  request: StageRequest;
}

/**
 * Everything wrong with `fluksio run`'s (and `fluksio status`') input at once, as a
 * UsageError: pipeline, stages, params, paths. With `parses`, an unchanged pipeline text is
 * not parsed again.
 */
export async function checkRunInput(
  args: string[],
  project: LocalProject,
  parses: Map<string, ParsedPipelineText>,
  options: StageRequestOptions,
): Promise<CheckedRunInput> {
  const { pipeline, notes } = await readProjectSource(project, parses);
  const words = splitStageArguments(args);
  const { request, problems: stageProblems } = stageRequest(pipeline, words.stages, options);
  const parsed = parseAssignmentArgs(words.params);
  const resolved = resolveParams(pipeline.params, parsed.assignments);
  const problems = [...stageProblems, ...parsed.problems, ...resolved.problems];
  if (problems.length > 0) throw problemsError(problems);
  const pathProblems = await checkWorkspacePaths(pipeline, project.workspace);
  if (pathProblems.length > 0) throw problemsError(pathProblems, project.displayPath);
  return { pipeline, grid: resolved.grid, notes, request };
}
