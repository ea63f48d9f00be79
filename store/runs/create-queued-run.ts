import { sql } from 'drizzle-orm';
import type { NewRun, Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { runScopeOf } from '../leases/run-scope-of.js';
import { waitingReason } from '../leases/waiting-reason.js';
import { createRun } from './create-run.js';

/**
 * Queues a run (createRun: a trigger key already held returns the run that holds it) with
 * the reason it waits for — `Queued`, or `Waiting for a runner labelled gpu` when no runner
 * seen within `onlineWindowMs` may take it — computed by the same INSERT: one statement and
 * one commit, so the submitter's first answer says whether any runner can take the run
 * without a second write (recordWaitingReasons' rule, waiting-reason.ts).
 */
export async function createQueuedRun({
  db,
  run,
  onlineWindowMs,
}: {
  db: Database;
  run: NewRun & { status: 'queued' };
  onlineWindowMs: number;
}): Promise<{ run: Run; created: boolean }> {
  const scope = runScopeOf({ labels: run.labels ?? [], repository: run.repository, fork: run.fork ?? false });
  return createRun({ db, run, statusReason: waitingReason(onlineWindowMs, scope, sql`null::text`) });
}
