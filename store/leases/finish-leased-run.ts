import { and, eq, ne } from 'drizzle-orm';
import type { FinishRequest } from '../../schemas/protocol/lease-requests.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { finishedNow } from '../runs/finished-now.js';
import { heldUnderLease, type LeaseFence } from './held-under-lease.js';

/**
 * Records the final state the runner holding `leaseId` reports: status, reason, metrics,
 * what made it dirty, `finished_at` and `duration_ms` by the database's clock. The lease
 * stops being renewable (the run is no longer running, so heartbeats, events and a release
 * under it are stale), but the lease id stays on the row: a finish sent again under the
 * same lease — its answer was lost — returns the run as the first finish left it instead
 * of a conflict. Null, changing nothing, for any other lease or an older epoch of this one
 * (heldUnderLease), or for a run finished otherwise (cancelled while queued, abandoned),
 * which clears the lease.
 */
export async function finishLeasedRun({
  db,
  runId,
  leaseId,
  leaseEpoch,
  status,
  reason,
  metrics,
  dirtyReasons = [],
}: LeaseFence & {
  db: Database;
  status: FinishRequest['status'];
  reason: string | null;
  metrics: Record<string, number>;
  /** What changed in the code while stages ran: makes the run dirty. */
  dirtyReasons?: string[];
}): Promise<Run | null> {
  const dirty = dirtyReasons.length > 0 ? { dirty: true, dirtyReasons } : {};
  const held = heldUnderLease({ runId, leaseId, leaseEpoch });
  const [finished] = await db
    .update(runs)
    .set({ status, statusReason: reason, metrics, ...dirty, ...finishedNow() })
    .where(and(held, eq(runs.status, 'running')))
    .returning();
  if (finished) return finished;
  const [already] = await db
    .select()
    .from(runs)
    .where(and(held, ne(runs.status, 'running'), ne(runs.status, 'queued')));
  return already ?? null;
}
