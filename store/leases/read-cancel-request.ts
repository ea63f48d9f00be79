import { and, eq } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import type { HeartbeatAnswer } from './heartbeat-run.js';

/**
 * Whether the runner holding run `runId` under `leaseId` must stop it, read without
 * renewing the lease (a runner's parked watch looks here; heartbeatRun renews and answers
 * the same): a cancel asked by requestCancel, or the run's timeout flagged by the
 * sweeper. Null when `leaseId` is not the run's lease or the run is no longer running.
 */
export async function readCancelRequest({
  db,
  runId,
  leaseId,
}: {
  db: Database;
  runId: string;
  leaseId: string;
}): Promise<HeartbeatAnswer | null> {
  const [answer] = await db
    .select({ cancel: runs.cancelRequested, reason: runs.cancelReason, finishAs: runs.cancelAs })
    .from(runs)
    .where(and(eq(runs.id, runId), eq(runs.leaseId, leaseId), eq(runs.status, 'running')));
  return answer ?? null;
}
