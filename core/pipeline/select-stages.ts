import type { Pipeline } from '../../schemas/pipeline.js';
import type { StageSelection } from '../../schemas/stage-selection.js';
import type { Problem } from '../problem.js';
import { buildStageGraph } from './stage-graph.js';

export interface StageSelectionRequest {
  /** The stages named (`fluksio run train evaluate`); empty for the whole pipeline. */
  named: readonly string[];
  /** Also select every stage that depends on a named one, directly or not. */
  downstream: boolean;
}

/**
 * The stages a run executes or restores for a request (`dvc repro STAGE` semantics): the
 * named stages and everything upstream of them, which they need; with `downstream`, also
 * every stage that depends on them and, in turn, what those need. Null selection when the
 * whole pipeline runs (nothing named, or the closure is every stage). An unknown name is a
 * problem naming it and every known stage, and saying so when it is a parameter's name.
 */
export function selectStages(
  pipeline: Pick<Pipeline, 'stages'> & Partial<Pick<Pipeline, 'params'>>,
  request: StageSelectionRequest,
): { selection: StageSelection | null; problems: Problem[] } {
  const known = Object.keys(pipeline.stages);
  const unknown = request.named.filter((name) => !(name in pipeline.stages));
  if (unknown.length > 0) {
    const list = unknown.map((name) => `"${name}"`).join(', ');
    // A bare parameter name is most likely a value left out (`fluksio run lr`).
    const params = unknown.filter((name) => name in (pipeline.params ?? {}));
    const hint =
      params.length === 0
        ? ''
        : ` (${params.map((name) => `"${name}" is a parameter: set it with ${name}=VALUE`).join('; ')})`;
    return {
      selection: null,
      problems: [
        {
          path: '',
          message: `No stage named ${list} in the pipeline; its stages are: ${known.join(', ')}${hint}`,
        },
      ],
    };
  }
  if (request.named.length === 0) return { selection: null, problems: [] };
  const upstreamOf = buildStageGraph(pipeline);
  const downstreamOf = new Map<string, string[]>(known.map((name) => [name, []]));
  for (const [name, upstream] of upstreamOf) {
    for (const each of upstream) downstreamOf.get(each)?.push(name);
  }
  const chosen = new Set<string>();
  const walk = (start: readonly string[], next: (name: string) => Iterable<string>) => {
    const pending = [...start];
    const seen = new Set<string>();
    while (pending.length > 0) {
      const name = pending.pop() as string;
      if (seen.has(name)) continue;
      seen.add(name);
      chosen.add(name);
      pending.push(...next(name));
    }
    return seen;
  };
  const targets = request.downstream
    ? [...walk(request.named, (name) => downstreamOf.get(name) ?? [])]
    : request.named;
  walk(targets, (name) => upstreamOf.get(name) ?? []);
  if (chosen.size === known.length) return { selection: null, problems: [] };
  return {
    selection: {
      named: [...new Set(request.named)],
      downstream: request.downstream,
      stages: known.filter((name) => chosen.has(name)),
    },
    problems: [],
  };
}
