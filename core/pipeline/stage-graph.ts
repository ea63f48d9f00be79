import type { Pipeline } from '../../schemas/pipeline.js';
import { normalizePipelinePath, pathContains } from './pipeline-paths.js';

/** For each stage, the stages whose outs or metrics files it lists among its deps. */
export type StageGraph = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The stage graph of DESIGN §1: stage A depends on stage B when a dep of A is an out
 * or metrics file of B, lies inside B's directory out, or is a directory holding one.
 * A stage listing its own out depends on itself (a cycle of one). `realPaths` gives, for
 * a normalized dep or out path, where it leads through symlinks of the work tree (see
 * realStagePaths), so that a dep reached through a link (`current/model.txt` with
 * `current -> models`) still waits for the stage that makes `models/model.txt`.
 */
export function buildStageGraph(
  pipeline: Pick<Pipeline, 'stages'>,
  realPaths: ReadonlyMap<string, string> = new Map(),
): StageGraph {
  const spellings = (path: string) => {
    const real = realPaths.get(path);
    return real === undefined || real === path ? [path] : [path, real];
  };
  const produced = Object.entries(pipeline.stages).flatMap(([name, stage]) =>
    [...stage.outs, ...stage.metrics].flatMap((path) =>
      spellings(normalizePipelinePath(path)).map((spelling) => ({ name, path: spelling })),
    ),
  );
  const graph = new Map<string, Set<string>>();
  for (const [name, stage] of Object.entries(pipeline.stages)) {
    const upstream = new Set<string>();
    for (const dep of stage.deps.map(normalizePipelinePath).flatMap(spellings)) {
      for (const out of produced) {
        if (pathContains(out.path, dep) || pathContains(dep, out.path)) upstream.add(out.name);
      }
    }
    graph.set(name, upstream);
  }
  return graph;
}

/** The stage that produces a dep, if any: what "upstream X re-ran" names. */
export function producerOf(pipeline: Pick<Pipeline, 'stages'>, dep: string): string | null {
  const path = normalizePipelinePath(dep);
  for (const [name, stage] of Object.entries(pipeline.stages)) {
    for (const out of [...stage.outs, ...stage.metrics].map(normalizePipelinePath)) {
      if (pathContains(out, path) || pathContains(path, out)) return name;
    }
  }
  return null;
}

/**
 * A cycle in the graph as the stages along it, first repeated last
 * (`['train', 'evaluate', 'train']`), or null when there is none.
 */
export function findCycle(graph: StageGraph): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const trail: string[] = [];
  const visit = (name: string): string[] | null => {
    if (state.get(name) === 'done') return null;
    if (state.get(name) === 'visiting') return [...trail.slice(trail.indexOf(name)), name];
    state.set(name, 'visiting');
    trail.push(name);
    for (const upstream of graph.get(name) ?? []) {
      const cycle = visit(upstream);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(name, 'done');
    return null;
  };
  for (const name of graph.keys()) {
    const cycle = visit(name);
    // Walked from dependents to their inputs; reversed it reads in the order data flows.
    if (cycle) return cycle.reverse();
  }
  return null;
}
