import type { Claim } from '../../schemas/protocol/claim.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import type { GitHubAppWorld } from './github-app-fixture.js';

/**
 * Claims the next run as a runner holding `runnerToken` would, over the control plane's
 * HTTP API, starts it and finishes it `succeeded` with `metrics`; the run it claimed.
 */
export async function runNextClaim(
  world: GitHubAppWorld,
  runnerToken: string,
  metrics: Record<string, number>,
): Promise<Claim['run']> {
  const call = async (path: string, json: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${world.plane.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runnerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const claim = (await call('/api/v1/runner/claim', { waitSeconds: 0 })) as unknown as Claim;
  await call(`/api/v1/runs/${claim.run.id}/start`, {
    lease: claim.lease,
    codeDigest: 'c'.repeat(64),
    envDigest: 'e'.repeat(64),
    ...ranAsClaimed(claim),
  });
  await call(`/api/v1/runs/${claim.run.id}/finish`, {
    lease: claim.lease,
    status: 'succeeded',
    reason: null,
    metrics,
  });
  return claim.run;
}
