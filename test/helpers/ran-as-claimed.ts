import { digestOf } from '../../schemas/canonical-json.js';
import type { Params } from '../../schemas/resolve-params.js';

/**
 * The params of a start request from a runner that resolved a claim's params as they were
 * queued (a pipeline that declares them all): the params and their digest.
 */
export function ranAsClaimed(claim: { run: { params: Params } }): { params: Params; paramsDigest: string } {
  return { params: claim.run.params, paramsDigest: digestOf(claim.run.params) };
}
