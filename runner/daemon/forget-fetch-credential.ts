import type { Logger } from 'pino';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';

/**
 * Has the control plane revoke the claim's fetch credential once the checkout is done
 * (or failed): the stages that run next never find a live token. A failure only means
 * the token lives until it expires, so it is logged, never thrown.
 */
export async function forgetFetchCredential(
  client: ControlPlaneClient,
  run: RunLease,
  claim: Claim,
  logger: Logger,
): Promise<void> {
  if (claim.git.extraHeader === null) return;
  await client
    .fetched(run, claim.git.extraHeader, { retries: 1 })
    .catch((error: unknown) => logger.warn({ err: error }, 'could not have the fetch credential revoked'));
}
