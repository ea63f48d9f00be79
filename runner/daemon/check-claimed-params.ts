import type { ParamValue } from '../../schemas/key-inputs.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import type { Problem } from '../../schemas/problem.js';
import { resolveParams, type Params } from '../../schemas/resolve-params.js';

/** The JavaScript type a declared parameter's value must have. */
const JS_TYPE = { int: 'number', float: 'number', string: 'string', bool: 'boolean' } as const;

/**
 * Checks a claimed run's params against the pipeline at the claimed commit, as
 * `fluksio run` checks typed input (DESIGN §4): the submitter validated them against
 * the pipeline it saw, but what runs is this commit's pipeline. Each value must have
 * its declared type, then passes through resolveParams (ints exact within ±2^53,
 * finite floats, min/max/enum, unknown and missing params named, defaults filled in).
 * Returns the complete parameter set, or every problem.
 */
export function checkClaimedParams(
  specs: Readonly<Record<string, ParamSpec>>,
  claimed: Readonly<Record<string, ParamValue>>,
): { params: Params; problems: [] } | { params: null; problems: Problem[] } {
  const problems: Problem[] = [];
  const assignments = [];
  for (const [key, value] of Object.entries(claimed)) {
    const spec = specs[key];
    if (spec && typeof value !== JS_TYPE[spec.type]) {
      problems.push({
        path: `params.${key}`,
        message: `Parameter '${key}': ${JSON.stringify(value)} is a ${typeof value}, but the pipeline declares it ${spec.type}`,
      });
      continue;
    }
    // The text a user would have typed: resolveParams parses it back by the declared type.
    assignments.push({ key, values: [String(value)] });
  }
  const resolved = resolveParams(specs, assignments);
  problems.push(...resolved.problems);
  const params = resolved.grid[0];
  if (problems.length > 0 || !params) return { params: null, problems };
  return { params, problems: [] };
}
