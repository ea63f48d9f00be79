import { isFinalRunStatus } from '../schemas/statuses.js';
import type { ControlPlaneClient } from '../client/control-plane-client.js';

/**
 * Cancels those of `runIds` that are still queued or running on the control plane
 * (a queued run ends at once; a running one is stopped by its runner at its next
 * heartbeat). Returns the ids it asked to cancel; the others had already ended.
 */
export async function cancelSubmittedRuns(
  client: ControlPlaneClient,
  runIds: readonly string[],
  reason: string,
): Promise<string[]> {
  const cancelled: string[] = [];
  for (const runId of runIds) {
    const report = await client.run(runId);
    if (isFinalRunStatus(report.run.status)) continue;
    await client.cancelRun(runId, { reason });
    cancelled.push(runId);
  }
  return cancelled;
}
