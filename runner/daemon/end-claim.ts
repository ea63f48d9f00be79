import type { Logger } from 'pino';
import type { z } from 'zod';
import type { FinishRequest } from '../../schemas/protocol/lease-requests.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { isLeaseLost } from '../../client/control-plane-errors.js';
import type { Masker } from '../output/masker.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { finishOrFail } from './finish-or-fail.js';

/** How a claimed run ended on this runner. */
export type ClaimEnd =
  | { end: 'finished'; status: FinishRequest['status'] }
  | { end: 'released'; reason: string }
  /** A fork's run this runner does not take (or cannot sandbox), given back. */
  | { end: 'refused' }
  | { end: 'lease-lost' };

/** What ends a claimed run: a finish with its outcome, or a release with its reason. */
export type ClaimEnding = z.input<typeof FinishRequest> | { release: string };

/** What endClaim needs of the run executing (execute-claim.ts). */
export interface EndClaimContext {
  client: ControlPlaneClient;
  run: RunLease;
  keeper: LeaseKeeper;
  /** Aborted once the lease was found gone: nothing more is written. */
  leaseLost: AbortSignal;
  /** Masks the runner's secrets in the ending's sentences. */
  masker: Masker;
  /** Aborted when a stopping runner's grace for the run's last writes is over. */
  drainDeadline: AbortSignal;
  logger: Logger;
}

/**
 * Ends a claimed run on the control plane: its heartbeats stopped first, then released or
 * finished with its sentences masked; a lease found gone meanwhile ends it with nothing written.
 */
export async function endClaim(context: EndClaimContext, unmasked: ClaimEnding): Promise<ClaimEnd> {
  const { client, run, keeper, masker, logger, leaseLost, drainDeadline } = context;
  // Heartbeats end first: one answered after the finish would only report a lease gone.
  await keeper.stop();
  if (leaseLost.aborted) return { end: 'lease-lost' };
  // Its sentences quote git, the engine and the control plane, which may quote a secret
  // (`failed to remove keep/<secret>.txt`): masked before they are cut or sent.
  const result = maskedEnd(masker, unmasked);
  try {
    if ('release' in result) {
      await client.release(run, result.release.slice(0, 1000));
      logger.info({ reason: result.release }, 'run released');
      return { end: 'released', reason: result.release };
    }
    const finish = { ...result, reason: result.reason?.slice(0, 4000) ?? null };
    await finishOrFail(client, run, finish, logger, drainDeadline);
    logger.info({ status: result.status, reason: result.reason }, 'run finished');
    return { end: 'finished', status: result.status };
  } catch (error) {
    if (isLeaseLost(error)) return { end: 'lease-lost' };
    throw error;
  }
}

/** A run's end with its sentences masked: the release's, or the finish's reason and dirty reasons. */
function maskedEnd(masker: Masker, result: ClaimEnding): ClaimEnding {
  if ('release' in result) return { release: masker.mask(result.release) };
  const { reason, dirtyReasons } = result;
  return {
    ...result,
    reason: reason === null || reason === undefined ? reason : masker.mask(reason),
    ...(dirtyReasons ? { dirtyReasons: dirtyReasons.map((each) => masker.mask(each)) } : {}),
  };
}
