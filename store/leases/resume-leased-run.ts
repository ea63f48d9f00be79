import { and, asc, eq, notInArray, sql } from 'drizzle-orm';
import type { StageRecord } from '../../schemas/stage-record.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';
import { toStageRecord } from '../runs/to-stage-record.js';

/** Whether a restarted runner may go on with a run, and where its events continue. */
export type ResumeAnswer =
  | {
      resumed: true;
      /** The run as resumed: `leaseEpoch` is the epoch the runner's writes must carry from now. */
      run: Run;
      nextSeq: number;
      /**
       * The stages that finished in this attempt, as recorded: the resumed runner keeps
       * them as they are (their logs, their `ran` status and usage) rather than running
       * or restoring them again. Empty for a run not started yet.
       */
      finished: StageRecord[];
    }
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
 * the seq the attempt's next event must carry: one past the last applied; `finished`, the
 * records of the stages that finished in the attempt.
 *
 * The lease's epoch goes up by one, and the new process's writes carry the new one: the
 * dead process's requests still in flight carry an older one and are refused as stale
 * (heldUnderLease), so none of its events can land under a seq past `nextSeq`, which the
 * new process numbers its own from. Any resume of the lease is granted, whatever epoch
 * the runner last knew: a runner killed again before it recorded its epoch resumes all the
 * same. The row is locked while it is read and bumped, and a batch's apply locks it too, so
 * a batch of the dead process applies either before (and is counted in `nextSeq`) or not
 * at all.
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
      .set({
        leaseExpiresAt: sql`now() + ${milliseconds(leaseTtlMs)}`,
        leaseEpoch: sql`${runs.leaseEpoch} + 1`,
      })
      .where(eq(runs.id, runId))
      .returning();
    if (!run) throw new Error(`Run ${runId} vanished while it was being resumed`);
    const [applied] = await tx
      .select({ next: sql<number>`coalesce(max(${appliedEvents.seq}) + 1, 0)::int` })
      .from(appliedEvents)
      .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, run.attempt)));
    // A started attempt's stage rows are its own: a later attempt's start deletes the
    // earlier one's (start-leased-run.ts). Before the start they may be an earlier attempt's.
    const rows =
      run.startedAt === null
        ? []
        : await tx
            .select()
            .from(stages)
            .where(and(eq(stages.runId, runId), notInArray(stages.status, ['running', 'pending'])))
            .orderBy(asc(stages.position));
    return { resumed: true, run, nextSeq: applied?.next ?? 0, finished: rows.map(toStageRecord) };
  });
}
