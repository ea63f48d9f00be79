import type { Pipeline } from '../../schemas/pipeline.js';
import type { Problem } from '../../core/problem.js';
import { UnsafePathError } from './unsafe-path-error.js';
import { resolveWorkspacePath } from './workspace-path.js';
import { repoPathIn, type Workspace } from './workspace.js';

/**
 * Checks, before anything runs, that no out, metrics file or dep of the pipeline
 * reaches outside the workspace through a symlink (DESIGN §5). Returns a problem per
 * unsafe path, with its place in the file. The engine checks again right before each
 * write and restore; this check is what lets a bad pipeline be refused up front.
 */
export async function checkWorkspacePaths(pipeline: Pipeline, workspace: Workspace): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const [name, stage] of Object.entries(pipeline.stages)) {
    for (const field of ['deps', 'outs', 'metrics'] as const) {
      for (const [index, path] of stage[field].entries()) {
        try {
          await resolveWorkspacePath(workspace.repoRoot, repoPathIn(workspace, path), {
            out: field !== 'deps',
          });
        } catch (error) {
          if (!(error instanceof UnsafePathError)) throw error;
          problems.push({ path: `stages.${name}.${field}[${index}]`, message: error.message });
        }
      }
    }
  }
  return problems;
}
