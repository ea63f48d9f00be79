import type { Pipeline } from '../../../schemas/pipeline.js';
import type { Problem } from '../../../core/problem.js';
import { resolveParams, type Params } from '../../../core/params/resolve-params.js';

/**
 * The one parameter set an automatic run (a push, a pull request's event) uses: every
 * param's default. A param without a default cannot run automatically: that is a problem
 * of the pipeline, reported as such.
 */
export function defaultGrid(pipeline: Pipeline): { grid: Params[]; problems: Problem[] } {
  const { grid, problems } = resolveParams(pipeline.params, []);
  return {
    grid,
    problems: problems.map((problem) => ({
      ...problem,
      message: `${problem.message} (automatic runs use the defaults)`,
    })),
  };
}
