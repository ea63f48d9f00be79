import { and, eq, not, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { finishedNow } from '../runs/finished-now.js';
import { heldUnderLease, type LeaseFence } from './held-under-lease.js';
import { releaseLimitReason, mayBeReleasedAgain } from './release-limit.js';
import { requeuedNow } from './requeued-now.js';

/**
 * Gives a run back to the queue for another runner (DESIGN §6: `running → queued` when a
 * runner stops, e.g. on SIGTERM): the lease is cleared, so anything its runner still sends
 * is stale, and `reason` becomes the status reason as given — a sentence such as `Runner
 * gpu-box-1 stopped (SIGTERM); queued again`. A release is not a failure and uses none of
 * the run's retries; the attempt goes up only if the run had started (see requeuedNow).
 * Releases are counted: past RELEASE_LIMIT the run is `abandoned` instead, its reason
 * saying so. A run whose cancel was asked is not queued again: it finishes as the cancel
 * said. Null, changing nothing, for a stale lease (another, or an older epoch of this one:
 * heldUnderLease) or a run that is not running.
 */
export async function releaseLeasedRun({
  db,
  runId,
  leaseId,
  leaseEpoch,
  reason,
}: LeaseFence & {
  db: Database;
  reason: string;
}): Promise<Run | null> {
  const held = and(heldUnderLease({ runId, leaseId, leaseEpoch }), eq(runs.status, 'running'));
  const live = and(held, eq(runs.cancelRequested, false));
  const [released] = await db
    .update(runs)
    .set({ ...requeuedNow(reason), releases: sql`${runs.releases} + 1` })
    .where(and(live, mayBeReleasedAgain))
    .returning();
  if (released) return released;
  const [abandoned] = await db
    .update(runs)
    .set({
      status: 'abandoned',
      statusReason: releaseLimitReason(reason),
      leaseId: null,
      releases: sql`${runs.releases} + 1`,
      ...finishedNow(),
    })
    .where(and(live, not(mayBeReleasedAgain)))
    .returning();
  if (abandoned) return abandoned;
  // The cancel flag only ever goes from false to true under one lease, so trying the
  // requeue first leaves no gap for a cancel asked between the two statements.
  const [cancelled] = await db
    .update(runs)
    .set({
      status: sql`${runs.cancelAs}`,
      statusReason: sql`${runs.cancelReason}`,
      leaseId: null,
      ...finishedNow(),
    })
    .where(and(held, eq(runs.cancelRequested, true)))
    .returning();
  return cancelled ?? null;
}
