import { and, eq, inArray, sql } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { waitingReason } from './waiting-reason.js';

/**
 * Says on each queued run what it waits for (DESIGN §6): `Waiting for a runner labelled
 * gpu, a100` when no runner seen within `onlineWindowMs` may take it (labels, owner and
 * repositories, forks: the claim's own rule), else `Queued`. A reason someone else wrote
 * (`… queued again`) is kept while the run can be taken, and replaced when it cannot:
 * what the run waits for matters more then. Only rows whose reason changes are written,
 * each locked `SKIP LOCKED`, so a claim in progress is never waited for (the next sweep
 * looks again), two sweepers never block each other, and claimers are held up by nothing
 * but the rows being rewritten. Returns the ids whose reason changed, for their check runs.
 */
export async function recordWaitingReasons({
  db,
  onlineWindowMs,
  runIds,
}: {
  db: Database;
  onlineWindowMs: number;
  /** Only these runs (a run just queued); all queued runs when absent. */
  runIds?: readonly string[];
}): Promise<string[]> {
  const reason = waitingReason(onlineWindowMs);
  const changing = db
    .select({ id: runs.id })
    .from(runs)
    .where(
      and(
        eq(runs.status, 'queued'),
        runIds ? inArray(runs.id, [...runIds]) : undefined,
        sql`${runs.statusReason} is distinct from ${reason}`,
      ),
    )
    .for('update', { skipLocked: true });
  const changed = await db
    .update(runs)
    .set({ statusReason: reason })
    .where(and(inArray(runs.id, changing), eq(runs.status, 'queued')))
    .returning({ id: runs.id });
  return changed.map((run) => run.id);
}
