import type { Logger } from 'pino';
import type { z } from 'zod';
import type { FinishRequest } from '../../schemas/protocol/lease-requests.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { ControlPlaneError, isLeaseLost } from '../../client/control-plane-errors.js';

/**
 * Finishes the run with its result; when the control plane refuses that result for good
 * (a 4xx other than a lost lease: something in it it cannot store), finishes it `failed`
 * with the refusal's sentence instead, so the run never stays `running` until its lease
 * expires. While the control plane cannot be reached the finish is sent again and again,
 * as the run's events are, until `persist` ends (the runner is stopping and its grace is
 * over): a result given up on would leave the run to its lease's expiry, `abandoned`
 * however it ended.
 */
export async function finishOrFail(
  client: ControlPlaneClient,
  run: RunLease,
  result: Omit<z.input<typeof FinishRequest>, 'lease' | 'epoch'>,
  logger: Logger,
  persist: AbortSignal,
): Promise<void> {
  try {
    await client.finish(run, result, { persist });
  } catch (error) {
    if (!(error instanceof ControlPlaneError) || isLeaseLost(error)) throw error;
    logger.warn({ err: error }, "the control plane refused the run's result: finishing it failed");
    const reason = `The control plane refused the run's result: ${error.message}`;
    await client.finish(run, { status: 'failed', reason: reason.slice(0, 4000), metrics: {} }, { persist });
  }
}
