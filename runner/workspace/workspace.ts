import { posix } from 'node:path';
import { repoPathOf } from '../../core/pipeline/pipeline-paths.js';

/** Where a pipeline runs: its repository and the directory of its file in it. */
export interface Workspace {
  /** Absolute path of the repository's work tree. */
  repoRoot: string;
  /** Absolute path of the pipeline file's directory: stages run here, paths are relative to it. */
  pipelineDir: string;
  /** The same directory relative to the repository root, `/`-separated; '' at the root. */
  pipelineDirInRepo: string;
}

/** A pipeline-relative path as a repository-relative one; throws for one outside it. */
export function repoPathIn(workspace: Workspace, path: string): string {
  const repoPath = repoPathOf(workspace.pipelineDirInRepo, path);
  if (repoPath === null) throw new Error(`"${path}" is outside the repository`);
  return repoPath;
}

/** A repository-relative path as the pipeline sees it (relative to its directory). */
export function pipelinePathIn(workspace: Workspace, repoPath: string): string {
  return posix.relative(workspace.pipelineDirInRepo || '.', repoPath) || '.';
}
