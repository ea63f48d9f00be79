import { and, eq, sql } from 'drizzle-orm';
import { runs, type CancelAs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';
import { heldUnderLease, type LeaseFence } from './held-under-lease.js';

/** What a heartbeat tells the runner: whether to stop the run, why, and the state to finish it in. */
export interface HeartbeatAnswer {
  cancel: boolean;
  reason: string | null;
  finishAs: CancelAs | null;
}

/**
 * Renews a running run's lease for `leaseTtlMs` from now (the database's clock) and answers
 * whether the runner must stop it: a cancel asked by requestCancel, or the run's timeout
 * flagged by the sweeper. Null when `leaseId` is not the run's lease or the run is no
 * longer running: the run was taken back (released, requeued, abandoned) or finished, and
 * the runner must stop; so for an epoch older than the lease's (a dead process's beat after
 * its restarted runner resumed the run). A lease past its expiry that nobody has taken back
 * yet is still the run's lease, and is renewed: the fence is the lease id and epoch, the
 * expiry only tells the sweeper when to step in.
 */
export async function heartbeatRun({
  db,
  runId,
  leaseId,
  leaseEpoch,
  leaseTtlMs,
}: LeaseFence & {
  db: Database;
  leaseTtlMs: number;
}): Promise<HeartbeatAnswer | null> {
  const [answer] = await db
    .update(runs)
    .set({ leaseExpiresAt: sql`now() + ${milliseconds(leaseTtlMs)}` })
    .where(and(heldUnderLease({ runId, leaseId, leaseEpoch }), eq(runs.status, 'running')))
    .returning({ cancel: runs.cancelRequested, reason: runs.cancelReason, finishAs: runs.cancelAs });
  return answer ?? null;
}
