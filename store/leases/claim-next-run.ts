import { and, asc, eq, not, sql } from 'drizzle-orm';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import { runners } from '../../schemas/tables/runners.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { isLockTimeout } from '../db/is-lock-timeout.js';
import { milliseconds } from '../db/milliseconds.js';
import { perHandle } from '../db/per-handle.js';
import { runnerMayTake } from './runner-may-take.js';

/** How long a claim waits for a claimable run another write holds locked. */
const LOCKED_RUN_WAIT = '2s';

/**
 * Gives `runner` the oldest queued run it may take (DESIGN §6), leased to it under
 * `leaseId` for `leaseTtlMs`, or null when there is none. One statement: the inner select
 * locks the chosen row `FOR UPDATE SKIP LOCKED`, so concurrent claimers — on any number of
 * app replicas — pass over a run another claim is taking instead of waiting for it or
 * taking it too, and never get the same run. Oldest first (by creation, then id) means
 * FIFO among the runs a runner can take: a run is never starved by newer ones. The
 * runner's registration is read from its row, so a runner removed meanwhile takes nothing.
 * Whether it accepts forks is recorded on its row, for the reason a queued run gives.
 *
 * A queued run is also locked, for a moment, by writes that are not claims (its waiting
 * reason, its baseline commits). Passing over it then would answer "nothing to do" while
 * a run waits, so when the first look finds nothing but a claimable run exists, the
 * claim looks again waiting up to 2 s for that lock: a write's lock is released in
 * milliseconds, and a run another claim took no longer matches once that claim commits.
 */
export async function claimNextRun({
  db,
  runner,
  acceptForks,
  leaseId,
  leaseTtlMs,
}: {
  db: Database;
  runner: RunnerRow;
  acceptForks: boolean;
  leaseId: string;
  leaseTtlMs: number;
}): Promise<Run | null> {
  if (runner.acceptsForks !== acceptForks) {
    await db.update(runners).set({ acceptsForks: acceptForks }).where(eq(runners.id, runner.id));
  }
  const values = {
    runnerId: runner.id,
    runnerName: runner.name,
    acceptForks,
    leaseId,
    leaseTtlMs,
  } satisfies Record<ClaimValue, unknown>;
  const prepared = preparedClaims(db);
  const [claimed] = await prepared.claimSkippingLocked.execute(values);
  if (claimed) return claimed;
  const [waiting] = await prepared.oldest.execute(values);
  if (!waiting) return null;
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local lock_timeout = '${LOCKED_RUN_WAIT}'`));
      const [taken] = await claimOldest(tx, false).execute(values);
      return taken ?? null;
    });
  } catch (error) {
    if (isLockTimeout(error)) return null;
    throw error;
  }
}

/** The values a claim's statements take, as placeholders: they are built once per handle. */
type ClaimValue = 'runnerId' | 'runnerName' | 'acceptForks' | 'leaseId' | 'leaseTtlMs';
const value = (name: ClaimValue) => sql.placeholder(name);

/** The oldest run this runner may take, by its registration as its row reads now. */
function oldestClaimable(db: Database) {
  const acceptForks = sql`${value('acceptForks')}::boolean`;
  return db
    .select({ id: runs.id })
    .from(runs)
    .innerJoin(runners, eq(runners.id, sql`${value('runnerId')}`))
    .where(and(eq(runs.status, 'queued'), not(runs.cancelRequested), runnerMayTake(runners, acceptForks)))
    .orderBy(asc(runs.createdAt), asc(runs.id))
    .limit(1);
}

/** Leases that run, locked for the claim (passing over a locked one when `skipLocked`). */
function claimOldest(db: Database, skipLocked: boolean) {
  const next = oldestClaimable(db).for('update', skipLocked ? { of: runs, skipLocked: true } : { of: runs });
  return db
    .update(runs)
    .set({
      status: 'running',
      statusReason: null,
      leaseId: sql`${value('leaseId')}::text`,
      leaseEpoch: 0,
      leaseExpiresAt: sql`now() + ${milliseconds(value('leaseTtlMs'))}`,
      claimedAt: sql`now()`,
      runnerName: sql`${value('runnerName')}::text`,
      startedAt: null,
    })
    .where(and(eq(runs.id, sql`(${next})`), eq(runs.status, 'queued')))
    .returning();
}

const preparedClaims = perHandle((db) => ({
  claimSkippingLocked: claimOldest(db, true).prepare('claim_next_run'),
  oldest: oldestClaimable(db).prepare('oldest_claimable_run'),
}));
