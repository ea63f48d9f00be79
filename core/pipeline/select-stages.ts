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
 * problem naming it and every known stage, and saying how to write it when it is a
 * parameter mistyped (parameterHint).
 */
export function selectStages(
  pipeline: Pick<Pipeline, 'stages'> & Partial<Pick<Pipeline, 'params'>>,
  request: StageSelectionRequest,
): { selection: StageSelection | null; problems: Problem[] } {
  const known = Object.keys(pipeline.stages);
  const unknown = request.named.filter((name) => !(name in pipeline.stages));
  if (unknown.length > 0) {
    const list = unknown.map((name) => `"${name}"`).join(', ');
    const params = pipeline.params ?? {};
    const hints = unknown.flatMap((word, index) => parameterHint(word, unknown[index + 1], params) ?? []);
    const hint = hints.length === 0 ? '' : ` (${hints.join('; ')})`;
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

/** A word that can be a parameter's name, perhaps after its params file (`params.yaml:lr`). */
const PARAM_NAME = /^(?:[^:]+:)?([A-Za-z_][\w.-]*)$/;

/**
 * How to write a parameter a stage word was meant to be, or null: a bare parameter name is
 * most likely a value left out (`fluksio run lr`) or given as the next word (`lr 0.1`), and
 * `lr:0.1` a colon typed for `=` (YAML's and Hydra's habit).
 */
function parameterHint(word: string, next: string | undefined, params: object): string | null {
  if (word in params) {
    const value = next !== undefined && !(next in params) ? next : 'VALUE';
    return `"${word}" is a parameter: set it with ${word}=${value}`;
  }
  const colon = word.lastIndexOf(':');
  const name = word.slice(0, colon);
  const value = word.slice(colon + 1);
  const bare = PARAM_NAME.exec(name)?.[1];
  if (colon < 0 || value === '' || bare === undefined) return null;
  return bare in params
    ? `"${word}" is a parameter written with ":": write ${name}=${value}`
    : `"${word}" looks like a parameter written with ":": parameters are NAME=VALUE, e.g. ${name}=${value}`;
}
