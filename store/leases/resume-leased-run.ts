import { and, eq, sql } from 'drizzle-orm';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';

/** Whether a restarted runner may go on with a run, and where its events continue. */
export type ResumeAnswer =
  | { resumed: true; run: Run; nextSeq: number }
  | {
      resumed: false;
      /**
       * `not-held`: no such run, or another runner's; `lease-stale`: the run is no longer
       * running under this lease (swept, released, finished); `cancel-pending`: a cancel
       * (or the run's timeout) was asked, so the run must end, not go on.
       */
      why: 'not-held' | 'lease-stale' | 'cancel-pending';
    };

/**
 * Lets a runner that died mid-run (kill -9, the OOM killer) and started again go on with
 * the run it held, in the same attempt: only while the run is `running` under `leaseId`,
 * held by `runnerName`, with no cancel pending. The lease is renewed for `leaseTtlMs`
 * from now (the database's clock) and its id kept: like a heartbeat, a lease past its
 * expiry that no sweep took back is still the run's, the id being the fence. `nextSeq` is
 * the seq the attempt's next event must carry: one past the last applied. The row is
 * locked while it is read, so a batch of the dead runner still being applied is counted.
 */
export async function resumeLeasedRun({
  db,
  runId,
  leaseId,
  runnerName,
  leaseTtlMs,
}: {
  db: Database;
  runId: string;
  leaseId: string;
  runnerName: string;
  leaseTtlMs: number;
}): Promise<ResumeAnswer> {
  return db.transaction(async (tx) => {
    const [held] = await tx
      .select({
        runnerName: runs.runnerName,
        leaseId: runs.leaseId,
        status: runs.status,
        cancelRequested: runs.cancelRequested,
      })
      .from(runs)
      .where(eq(runs.id, runId))
      .for('update');
    if (!held || held.runnerName !== runnerName) return { resumed: false, why: 'not-held' };
    if (held.leaseId !== leaseId || held.status !== 'running') return { resumed: false, why: 'lease-stale' };
    if (held.cancelRequested) return { resumed: false, why: 'cancel-pending' };
    const [run] = await tx
      .update(runs)
      .set({ leaseExpiresAt: sql`now() + ${milliseconds(leaseTtlMs)}` })
      .where(eq(runs.id, runId))
      .returning();
    if (!run) throw new Error(`Run ${runId} vanished while it was being resumed`);
    const [applied] = await tx
      .select({ next: sql<number>`coalesce(max(${appliedEvents.seq}) + 1, 0)::int` })
      .from(appliedEvents)
      .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, run.attempt)));
    return { resumed: true, run, nextSeq: applied?.next ?? 0 };
  });
}
