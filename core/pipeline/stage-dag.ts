import type { Pipeline } from '../../schemas/pipeline.js';
import { normalizePipelinePath, pathContains } from './pipeline-paths.js';
import { buildStageGraph } from './stage-graph.js';

/** A stage in the drawn graph. */
export interface StageDagNode {
  name: string;
  /** 1 for a stage that needs no other, else one more than the deepest stage it needs. */
  layer: number;
  /** What the stage does, as its pipeline file says (DVC's `desc`); null when it says nothing. */
  description: string | null;
  cmd: string;
  deps: string[];
  outs: string[];
  metrics: string[];
}

/** `from` makes something `to` reads. */
export interface StageDagEdge {
  from: string;
  to: string;
  /** The deps of `to` that are (or hold, or lie in) outs or metrics files of `from`. */
  paths: string[];
}

/** What `fluksio dag --json` prints. */
export interface StageDag {
  /** In the pipeline's order. */
  nodes: StageDagNode[];
  /** By `to` in the pipeline's order, then `from` in the pipeline's order. */
  edges: StageDagEdge[];
}

/**
 * The stage graph of a validated (so acyclic) pipeline as nodes in layers and edges that
 * name the paths they carry: what `fluksio dag` draws.
 */
export function stageDag(pipeline: Pick<Pipeline, 'stages'>): StageDag {
  const graph = buildStageGraph(pipeline);
  const names = Object.keys(pipeline.stages);
  const layers = new Map<string, number>();
  const layerOf = (name: string): number => {
    const known = layers.get(name);
    if (known !== undefined) return known;
    const upstream = [...(graph.get(name) ?? [])].filter((each) => each !== name);
    const layer = 1 + Math.max(0, ...upstream.map(layerOf));
    layers.set(name, layer);
    return layer;
  };
  const nodes = Object.entries(pipeline.stages).map(([name, stage]) => ({
    name,
    layer: layerOf(name),
    description: stage.description ?? null,
    cmd: stage.cmd,
    deps: stage.deps,
    outs: stage.outs,
    metrics: stage.metrics,
  }));
  const edges = names.flatMap((to) => {
    const deps = (pipeline.stages[to]?.deps ?? []).map(normalizePipelinePath);
    return names
      .filter((from) => graph.get(to)?.has(from))
      .map((from) => {
        const made = [...(pipeline.stages[from]?.outs ?? []), ...(pipeline.stages[from]?.metrics ?? [])].map(
          normalizePipelinePath,
        );
        const paths = deps.filter((dep) =>
          made.some((out) => pathContains(out, dep) || pathContains(dep, out)),
        );
        return { from, to, paths };
      });
  });
  return { nodes, edges };
}
