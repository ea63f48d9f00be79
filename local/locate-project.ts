import { existsSync, statSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { readFileInside } from '../runner/workspace/read-file-inside.js';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Pipeline } from '../schemas/pipeline.js';
import type { ParsedPipelineText } from '../core/pipeline/validate-pipeline.js';
import { findRepoRoot } from '../runner/workspace/find-repo-root.js';
import { NotAGitRepositoryError } from '../runner/workspace/not-a-git-repository-error.js';
import type { Workspace } from '../runner/workspace/workspace.js';
import { loadProjectPipeline, PROJECT_PIPELINE_FILES } from '../core/dvc/load-project-pipeline.js';
import { problemsError, UsageError } from '../present/terminal/usage-error.js';

/** A pipeline file on this machine, where its state lives, and what it says. */
export interface LocalProject {
  workspace: Workspace;
  /** Absolute path of the pipeline file. */
  pipelineFile: string;
  /** The pipeline file's path relative to the repository root: how runs name it. */
  pipelinePath: string;
  /** The pipeline file as the user named it, for messages. */
  displayPath: string;
  /** `.fluksio/` beside the pipeline file. */
  stateDir: string;
}

/**
 * Finds the pipeline (`--pipeline PATH`, default `fluksio.yml` in the current
 * directory) and the git repository around it. Throws UsageError when either is missing.
 */
export async function locateProject(pipelineOption: string | undefined, cwd: string): Promise<LocalProject> {
  // A DVC project is adopted unchanged: its dvc.yaml stands in where there is no fluksio.yml.
  const displayPath =
    pipelineOption ??
    PROJECT_PIPELINE_FILES.find((name) => existsSync(resolve(cwd, name))) ??
    PROJECT_PIPELINE_FILES[0];
  const file = resolve(cwd, displayPath);
  if (!existsSync(file)) {
    throw new UsageError(pipelineOption ? `--pipeline: ${displayPath} does not exist` : noPipelineHere(cwd));
  }
  if (statSync(file).isDirectory()) throw new UsageError(folderNamed(displayPath, file));
  const pipelineDir = await realpath(dirname(file));
  let repoRoot: string;
  try {
    repoRoot = await findRepoRoot(pipelineDir);
  } catch (error) {
    if (error instanceof NotAGitRepositoryError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  const pipelineDirInRepo = relative(repoRoot, pipelineDir).split(sep).join('/');
  const fileName = file.slice(dirname(file).length + 1);
  return {
    workspace: { repoRoot, pipelineDir, pipelineDirInRepo },
    pipelineFile: join(pipelineDir, fileName),
    pipelinePath: pipelineDirInRepo ? `${pipelineDirInRepo}/${fileName}` : fileName,
    displayPath,
    stateDir: join(pipelineDir, '.fluksio'),
  };
}

/** `--pipeline` names a folder: the file in it to name instead, when there is one. */
function folderNamed(displayPath: string, folder: string): string {
  const inside = PROJECT_PIPELINE_FILES.find((name) => existsSync(join(folder, name)));
  return inside === undefined
    ? `--pipeline: ${displayPath} is a folder, and holds no fluksio.yml (nor dvc.yaml); name the pipeline file`
    : `--pipeline: ${displayPath} is a folder; name the pipeline file in it: --pipeline ${join(displayPath, inside)}`;
}

/**
 * No pipeline in `cwd`: the nearest one in a folder above it (up to the repository's top, or
 * the file system's when there is no repository) is named with how to reach it, as a user
 * in `src/` of a project expects fluksio, like git, to look upwards.
 */
function noPipelineHere(cwd: string): string {
  for (let folder = cwd, up = '..'; dirname(folder) !== folder; up = join(up, '..')) {
    const atTop = existsSync(join(folder, '.git'));
    folder = dirname(folder);
    if (atTop) break;
    const found = PROJECT_PIPELINE_FILES.find((name) => existsSync(join(folder, name)));
    if (found !== undefined) {
      const path = join(up, found);
      return `No fluksio.yml (nor dvc.yaml) in ${cwd}, but there is ${path}: run from ${up} or give --pipeline ${path}`;
    }
  }
  return `No fluksio.yml (nor dvc.yaml) in ${cwd}: run from the pipeline's folder or give --pipeline PATH`;
}

/**
 * Reads and validates the project's pipeline; every problem at once in a UsageError
 * (`fluksio.yml:14: stages.train.params[2]: …`). With `parses`, a text read before is not
 * parsed again (see validatePipeline).
 */
export async function readProjectPipeline(
  project: LocalProject,
  parses?: Map<string, ParsedPipelineText>,
): Promise<Pipeline> {
  return (await readProjectSource(project, parses)).pipeline;
}

/**
 * The project's pipeline and what of it cannot be honoured: a `dvc.yaml` is translated
 * (with its params.yaml and vars files) and may leave stages out, each named in `notes`.
 */
export async function readProjectSource(
  project: LocalProject,
  parses?: Map<string, ParsedPipelineText>,
): Promise<{ pipeline: Pipeline; notes: string[] }> {
  const { workspace } = project;
  const text = await readFile(project.pipelineFile, 'utf8');
  const context = {
    pipelineDir: workspace.pipelineDirInRepo,
    exists: (repoPath: string) => existsSync(join(workspace.repoRoot, repoPath)),
  };
  const pipelineDir = dirname(project.pipelineFile);
  const { pipeline, problems, notes } = loadProjectPipeline(
    {
      ...context,
      file: project.pipelineFile,
      text,
      readFile: (path) => readFileInside(workspace.repoRoot, resolve(pipelineDir, path)),
    },
    parses,
  );
  if (!pipeline) throw problemsError(problems, project.displayPath);
  return { pipeline, notes };
}
