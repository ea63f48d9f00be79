import { and, eq, not, sql, type SQL } from 'drizzle-orm';
import { runners } from '../../schemas/tables/runners.js';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';
import { runnerMayTake } from '../leases/runner-may-take.js';
import { runScopeOf } from '../leases/run-scope-of.js';
import { waitingReason } from '../leases/waiting-reason.js';
import { createRun } from './create-run.js';

/** A claim parked for work, which the run may be leased to as it is inserted. */
export interface QueuedRunTaker {
  runnerId: string;
  runnerName: string;
  acceptForks: boolean;
  leaseId: string;
  leaseTtlMs: number;
}

/**
 * Queues a run (createRun: a trigger key already held returns the run that holds it) with
 * the reason it waits for — `Queued`, or `Waiting for a runner labelled gpu` when no runner
 * seen within `onlineWindowMs` may take it — computed by the same INSERT: one statement and
 * one commit, so the submitter's first answer says whether any runner can take the run
 * without a second write (recordWaitingReasons' rule, waiting-reason.ts).
 *
 * With a `taker` (a claim parked for work), the same INSERT stores the run already leased
 * to it, as claimNextRun would have, when the claim's rule lets its runner — as its row now
 * reads — take the run and no older queued run is one it may take (FIFO holds); else the
 * run is queued as without one. The run returned says which (`status`, `leaseId`).
 */
export async function createQueuedRun({
  db,
  run,
  onlineWindowMs,
  taker,
}: {
  db: Database;
  run: NewRun & { status: 'queued' };
  onlineWindowMs: number;
  taker?: QueuedRunTaker;
}): Promise<{ run: Run; created: boolean }> {
  const scope = runScopeOf({ labels: run.labels ?? [], repository: run.repository, fork: run.fork ?? false });
  const reason = waitingReason(onlineWindowMs, scope, sql`null::text`);
  if (!taker) return createRun({ db, run, computed: { statusReason: reason } });

  const taken = sql`exists (select from ${runners}
    where ${runners.id} = ${taker.runnerId}
      and ${runnerMayTake(runners, taker.acceptForks, scope)}
      and not exists (select from ${runs}
        where ${and(eq(runs.status, 'queued'), not(runs.cancelRequested), runnerMayTake(runners, taker.acceptForks))}))`;
  const ifTaken = (value: SQL, otherwise: SQL = sql`null`): SQL =>
    sql`(case when ${taken} then ${value} else ${otherwise} end)`;
  return createRun({
    db,
    run,
    computed: {
      status: ifTaken(sql`'running'`, sql`'queued'`),
      leaseId: ifTaken(sql`${taker.leaseId}`),
      leaseExpiresAt: ifTaken(sql`now() + ${milliseconds(taker.leaseTtlMs)}`),
      claimedAt: ifTaken(sql`now()`),
      runnerName: ifTaken(sql`${taker.runnerName}`),
      statusReason: ifTaken(sql`null`, reason),
    },
  });
}
