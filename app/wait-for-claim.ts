import { randomBytes } from 'node:crypto';
import type { RunnerRow } from '../schemas/tables/runners.js';
import type { Run } from '../schemas/tables/runs.js';
import type { Database } from '../store/db/database.js';
import { claimNextRun } from '../store/leases/claim-next-run.js';
import type { ClaimHandoff } from './claim-handoff.js';
import type { RunDoorbell } from './run-doorbell.js';

/**
 * Claims the oldest run this runner may take, waiting up to `waitMs` for one (the
 * long-poll of `POST /api/v1/runner/claim`). Looks again whenever the doorbell rings and
 * at least every `recheckMs` regardless, since a ring can be lost and Postgres is the
 * truth. The ticket is taken before each look, so a run queued during a look is not
 * missed until the next re-check. While it waits, the claim is offered to the runs queued
 * in this process (`handoff`), which can lease one to it in their own insert. Returns null
 * when the time is up or `signal` aborts.
 */
export async function waitForClaim({
  db,
  doorbell,
  handoff,
  runner,
  acceptForks,
  leaseTtlMs,
  waitMs,
  recheckMs,
  signal,
}: {
  db: Database;
  doorbell: RunDoorbell;
  handoff: ClaimHandoff;
  runner: RunnerRow;
  /** The runner takes fork pull requests' runs (started with --accept-forks). */
  acceptForks: boolean;
  leaseTtlMs: number;
  waitMs: number;
  recheckMs: number;
  signal: AbortSignal;
}): Promise<Run | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const ticket = doorbell.take();
    const leaseId = randomBytes(32).toString('hex');
    const run = await claimNextRun({ db, runner, acceptForks, leaseId, leaseTtlMs });
    const remaining = deadline - Date.now();
    if (run || remaining <= 0 || signal.aborted) {
      ticket.cancel();
      return run;
    }
    const offer = handoff.park(runner, acceptForks, leaseId);
    await Promise.race([ticket.wait(Math.min(remaining, recheckMs), signal), offer.handed]);
    const handed = await offer.withdraw();
    if (handed) {
      ticket.cancel();
      return handed;
    }
  }
}
