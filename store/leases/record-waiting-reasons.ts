import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { runners } from '../../schemas/tables/runners.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';
import { runnerMayTake } from './runner-may-take.js';

/** The status reason of a queued run some online runner may take. */
export const QUEUED_REASON = 'Queued';

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

/** The reason the current `runs` row should give, as an SQL expression. */
function waitingReason(onlineWindowMs: number): SQL<string> {
  const someoneMayTake = sql`exists (select from ${runners}
    where ${runners.lastSeenAt} > now() - ${milliseconds(onlineWindowMs)}
      and ${runnerMayTake(runners, runners.acceptsForks)})`;
  const ownReason = sql`${runs.statusReason} is null or ${runs.statusReason} = ${QUEUED_REASON}
    or ${runs.statusReason} like 'Waiting for a runner%'`;
  const wanted = sql`case when cardinality(${runs.labels}) = 0
      then 'for ' || ${runs.repository}
      else 'labelled ' || array_to_string(${runs.labels}, ', ') end
    || case when ${runs.fork} then ' that accepts forks' else '' end`;
  return sql<string>`(case
    when not ${someoneMayTake} then 'Waiting for a runner ' || ${wanted}
    when ${ownReason} then ${QUEUED_REASON}
    else ${runs.statusReason} end)`;
}
