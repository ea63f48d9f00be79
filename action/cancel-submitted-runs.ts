import { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { isFinalRunStatus } from '../schemas/statuses.js';
import type { ApiClient } from '../cli/remote/api-client.js';

/**
 * Cancels those of `runIds` that are still queued or running on the control plane
 * (a queued run ends at once; a running one is stopped by its runner at its next
 * heartbeat). Returns the ids it asked to cancel; the others had already ended.
 */
export async function cancelSubmittedRuns(
  client: ApiClient,
  runIds: readonly string[],
  reason: string,
): Promise<string[]> {
  const cancelled: string[] = [];
  for (const runId of runIds) {
    const report = await client.request('GET', `/api/v1/runs/${runId}`, RemoteRunReport);
    if (isFinalRunStatus(report.run.status)) continue;
    await client.request('POST', `/api/v1/runs/${runId}/cancel`, RemoteRunReport, { body: { reason } });
    cancelled.push(runId);
  }
  return cancelled;
}
