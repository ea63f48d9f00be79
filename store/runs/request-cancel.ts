import { and, eq, inArray, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Cancels a run (DESIGN §6): a queued run becomes `cancelled` at once, with `reason`; a
 * running one is flagged (`cancel_requested`, finishing as `cancelled`), and its runner
 * learns it from its next heartbeat and stops the stage's processes. One statement decides
 * by the state the row is in when it is locked, so a run claimed at the same moment is
 * flagged rather than missed. A run already flagged keeps the first reason (a timeout
 * stays a timeout); a finished run is returned unchanged; null for an unknown run.
 */
export async function requestCancel({
  db,
  runId,
  reason,
}: {
  db: Database;
  runId: string;
  reason: string;
}): Promise<Run | null> {
  const queued = sql`${runs.status} = 'queued'`;
  const flagging = sql`${runs.status} = 'running' and not ${runs.cancelRequested}`;
  const [changed] = await db
    .update(runs)
    .set({
      status: sql`case when ${queued} then 'cancelled' else ${runs.status} end`,
      statusReason: sql`case when ${queued} then ${reason} else ${runs.statusReason} end`,
      finishedAt: sql`case when ${queued} then now() else ${runs.finishedAt} end`,
      cancelRequested: sql`${runs.cancelRequested} or ${runs.status} = 'running'`,
      cancelReason: sql`case when ${flagging} then ${reason} else ${runs.cancelReason} end`,
      cancelAs: sql`case when ${flagging} then 'cancelled' else ${runs.cancelAs} end`,
    })
    .where(and(eq(runs.id, runId), inArray(runs.status, ['queued', 'running'])))
    .returning();
  if (changed) return changed;
  const [run] = await db.select().from(runs).where(eq(runs.id, runId));
  return run ?? null;
}
