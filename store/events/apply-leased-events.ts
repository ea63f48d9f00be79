import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { RunEvent } from '../../schemas/run-event.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { runs } from '../../schemas/tables/runs.js';
import { heldUnderLease, type LeaseFence } from '../leases/held-under-lease.js';
import { applyRunEvents } from './apply-run-events.js';
import type { Database } from '../db/database.js';

/** Seqs per INSERT into applied_events: 3 bind parameters each. */
const SEQS_PER_INSERT = 5000;

/** What a batch did: how many of its events were new, and how many are now known applied. */
export interface AppliedBatch {
  applied: number;
  acked: number;
}

/**
 * Applies a runner's batch of events to the run it holds, each event once per
 * `(run, attempt, seq)` and in seq order (DESIGN §6). A runner resends a batch until it is
 * acknowledged, so a batch may arrive twice, or while an earlier copy is still being
 * applied. In one transaction: the run row is locked while the lease is checked, so the
 * lease cannot be lost before the commit and batches of one run apply one after another;
 * an attempt's events count from seq 0, and only the events that continue the applied
 * sequence without a gap are applied — an event that overtook an earlier one (`stage.started`
 * after its `stage.finished` would undo the stage) waits until that one has come. Their seqs
 * are inserted into applied_events `ON CONFLICT DO NOTHING RETURNING`, and only the seqs
 * inserted are applied, with the cache scope read from the run's row, never from the
 * runner, and `stage.log` lines kept. `applied` counts the events new in this batch;
 * `acked` the batch's events now known applied, which the runner may forget (the rest it
 * sends again). Null, changing nothing, for a stale lease, a run not running, an attempt
 * other than the run's, or a run not started: a claimed run that never starts goes back
 * to the queue under the same attempt, so it must not have applied anything. A stale
 * lease includes an older epoch of the run's lease (heldUnderLease): a runner restarted
 * mid-run numbers its events from where the applied ones end when it resumes, so a batch
 * of the process that died, landing after that, would take the seqs of the new process's
 * events, and theirs would be acknowledged as duplicates and lost.
 */
export async function applyLeasedEvents({
  db,
  runId,
  leaseId,
  leaseEpoch,
  attempt,
  events,
  maxStageLogBytes,
}: LeaseFence & {
  db: Database;
  attempt: number;
  events: readonly RunEvent[];
  /** The most of each stage's log kept in this attempt (keepWithinLogLimit). @defaultValue no limit */
  maxStageLogBytes?: number;
}): Promise<AppliedBatch | null> {
  return db.transaction(async (tx) => {
    const [run] = await tx
      .select({ repository: runs.repository, trustDomain: runs.trustDomain })
      .from(runs)
      .where(
        and(
          heldUnderLease({ runId, leaseId, leaseEpoch }),
          eq(runs.status, 'running'),
          eq(runs.attempt, attempt),
          isNotNull(runs.startedAt),
        ),
      )
      .for('update');
    if (!run) return null;
    const [applied] = await tx
      .select({ next: sql<number>`coalesce(max(${appliedEvents.seq}) + 1, 0)::int` })
      .from(appliedEvents)
      .where(and(eq(appliedEvents.runId, runId), eq(appliedEvents.attempt, attempt)));
    // The first of two events sharing a seq is the one that counts, as it would had they come apart.
    const bySeq = new Map<number, RunEvent>();
    for (const event of events) if (!bySeq.has(event.seq)) bySeq.set(event.seq, event);
    let next = applied?.next ?? 0;
    const continuing: number[] = [];
    while (bySeq.has(next)) continuing.push(next++);

    const fresh = new Set<number>();
    for (let start = 0; start < continuing.length; start += SEQS_PER_INSERT) {
      const inserted = await tx
        .insert(appliedEvents)
        .values(continuing.slice(start, start + SEQS_PER_INSERT).map((seq) => ({ runId, attempt, seq })))
        .onConflictDoNothing()
        .returning({ seq: appliedEvents.seq });
      for (const { seq } of inserted) fresh.add(seq);
    }
    const toApply = continuing.filter((seq) => fresh.has(seq)).map((seq) => bySeq.get(seq) as RunEvent);
    await applyRunEvents({
      db: tx,
      runId,
      ...run,
      events: toApply,
      keepLogs: { attempt, ...(maxStageLogBytes !== undefined ? { maxStageLogBytes } : {}) },
    });
    return { applied: toApply.length, acked: events.filter((event) => event.seq < next).length };
  });
}
