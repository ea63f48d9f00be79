import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { buildStageGraph, findCycle, type StageGraph } from '../../core/pipeline/stage-graph.js';
import type { Pipeline } from '../../schemas/pipeline.js';

/**
 * Where each dep and out of a pipeline leads through the symlinks of the work tree, as a
 * normalized pipeline-relative path, for the paths that lead elsewhere than they are
 * written (buildStageGraph): the longest part of the path that exists is resolved, the
 * rest kept. A path that leads out of the pipeline's repository, or cannot be resolved, is
 * left out: it is refused or named where it is read.
 */
export async function realStagePaths(
  pipeline: Pick<Pipeline, 'stages'>,
  pipelineDir: string,
  repoRoot: string,
): Promise<Map<string, string>> {
  const realDir = await realpath(pipelineDir);
  const realRoot = await realpath(repoRoot);
  const found = new Map<string, string>();
  const paths = Object.values(pipeline.stages).flatMap((stage) => [
    ...stage.deps,
    ...stage.outs,
    ...stage.metrics,
  ]);
  for (const written of new Set(paths.map(normalizePipelinePath))) {
    const real = await resolveExisting(path.join(pipelineDir, written)).catch(() => null);
    if (real === null) continue;
    const inRoot = path.relative(realRoot, real);
    if (inRoot.startsWith('..') || path.isAbsolute(inRoot)) continue;
    const relative = normalizePipelinePath(path.relative(realDir, real).split(path.sep).join('/'));
    if (relative !== written) found.set(written, relative);
  }
  return found;
}

/** The real path of `absolute`: its longest existing ancestor resolved, the rest appended. */
async function resolveExisting(absolute: string): Promise<string> {
  const rest: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      return path.join(await realpath(at), ...rest.reverse());
    } catch (error) {
      const parent = path.dirname(at);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw error;
      rest.push(path.basename(at));
      at = parent;
    }
  }
}

/**
 * The stage graph a run schedules by: buildStageGraph with the paths' real spellings, so
 * a dep reached through a link waits for the stage that makes what it leads to. Should
 * the links close a cycle the pipeline file does not show, or cannot be read, the graph
 * of the paths as written (which validation checked) is kept.
 */
export async function linkedStageGraph(
  pipeline: Pick<Pipeline, 'stages'>,
  workspace: { pipelineDir: string; repoRoot: string },
): Promise<StageGraph> {
  const real = await realStagePaths(pipeline, workspace.pipelineDir, workspace.repoRoot).catch(() => null);
  const graph = real === null ? null : buildStageGraph(pipeline, real);
  return graph === null || findCycle(graph) !== null ? buildStageGraph(pipeline) : graph;
}
