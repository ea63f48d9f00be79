import { and, eq, inArray, isNotNull, isNull, lt, not, sql, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { finishedNow } from '../runs/finished-now.js';
import { formatTimeLimit } from '../../core/text/format-time-limit.js';
import { milliseconds } from '../db/milliseconds.js';
import { availableFor } from './control-plane-beat.js';
import { recordWaitingReasons } from './record-waiting-reasons.js';
import { mayBeReleasedAgain, releaseLimitReason } from './release-limit.js';
import { requeuedNow } from './requeued-now.js';

export interface SweepSettings {
  /** A runner seen within this window counts as online, for the waiting reasons. */
  onlineWindowMs: number;
  /** A run queued (or queued again) longer than this becomes `timed_out`. */
  queueTimeoutMs: number;
  /**
   * When set, an expired lease is taken back (1) only once the control plane has been
   * available (its beats in control_plane_availability, beatControlPlane) for `forMs`
   * without a gap longer than `outageAfterMs`: a lease that expired during an outage says
   * nothing about the runner, whose heartbeats could not reach it. Unset, at once.
   */
  leaseGrace?: { forMs: number; outageAfterMs: number };
}

/** The runs one sweep changed, by what happened to them, for their check runs. */
export interface SweepResult {
  /** Running runs whose lease expired, queued again (never started, or retries left). */
  requeued: string[];
  /** Running runs whose lease expired with no retry left: `abandoned`, naming the runner. */
  abandoned: string[];
  /** Queued runs no runner took within the queue timeout: `timed_out`. */
  expired: string[];
  /** Running runs past their time limit, now flagged to stop (their runner finishes them). */
  timedOut: string[];
  /** Running runs whose runner vanished after a cancel was asked: finished as asked. */
  cancelled: string[];
  /** Queued runs whose waiting reason changed. */
  waiting: string[];
}

/**
 * What the control plane's periodic sweep does (DESIGN §6), by the database's clock:
 * (1) a running run whose lease expired (and, with `leaseGrace`, once the control plane has
 * been available long enough) goes back to the queue when it never started
 * (without using a retry, but counted against RELEASE_LIMIT) or has retries left
 * (attempt + 1), is finished as asked when a cancel was pending, and is otherwise
 * `abandoned`, naming its runner and when the lease expired; (2) a run queued longer than the queue timeout becomes `timed_out`, saying the
 * labels nobody carried; (3) a running run past `started_at + timeout_ms` is flagged to
 * stop as `timed_out`; (4) queued runs say what they wait for. Every change is one
 * statement over the rows it locks `FOR UPDATE SKIP LOCKED`, its conditions checked under
 * the lock: two sweepers (two replicas) split the rows instead of changing one twice, and
 * a run a heartbeat or a runner's write holds at that moment is left to the next sweep.
 */
export async function sweepRuns({
  db,
  settings,
}: {
  db: Database;
  settings: SweepSettings;
}): Promise<SweepResult> {
  const { cancelled, neverStarted, neverStartedTooOften, retried, abandoned } = await sweepExpiredLeases(
    db,
    settings.leaseGrace,
  );

  const queueLimit = formatTimeLimit(settings.queueTimeoutMs);
  const expiredInQueue = await sweep(
    db,
    and(eq(runs.status, 'queued'), lt(runs.queuedAt, sql`now() - ${milliseconds(settings.queueTimeoutMs)}`)),
    {
      status: 'timed_out',
      statusReason: sql`case when cardinality(${runs.labels}) = 0 then 'No runner'
        else 'No runner labelled ' || array_to_string(${runs.labels}, ', ') end
        || ${` took the run within ${queueLimit}`}`,
      ...finishedNow(),
    },
  );

  const overdue = and(
    eq(runs.status, 'running'),
    eq(runs.cancelRequested, false),
    lt(sql`${runs.startedAt} + ${runs.timeoutMs} * interval '1 millisecond'`, sql`now()`),
  );
  const timedOut: string[] = [];
  // One statement per distinct limit, so each reason names its run's own limit.
  const limits = await db.selectDistinct({ timeoutMs: runs.timeoutMs }).from(runs).where(overdue);
  for (const { timeoutMs } of limits) {
    const flagged = await sweep(db, and(overdue, eq(runs.timeoutMs, timeoutMs)), {
      cancelRequested: true,
      cancelAs: 'timed_out',
      cancelReason: `The run exceeded its timeout of ${formatTimeLimit(timeoutMs)}`,
    });
    timedOut.push(...flagged);
  }

  const waiting = await recordWaitingReasons({ db, onlineWindowMs: settings.onlineWindowMs });
  return {
    requeued: [...neverStarted, ...retried],
    abandoned: [...neverStartedTooOften, ...abandoned],
    expired: expiredInQueue,
    timedOut,
    cancelled,
    waiting,
  };
}

/** The runs a sweep of expired leases changed, by what happened to them. */
interface LeaseChanges {
  cancelled: string[];
  neverStarted: string[];
  neverStartedTooOften: string[];
  retried: string[];
  abandoned: string[];
}

/** Step (1) of sweepRuns: the running runs whose lease expired, taken back from their runner. */
async function sweepExpiredLeases(db: Database, grace: SweepSettings['leaseGrace']): Promise<LeaseChanges> {
  const expired = and(
    eq(runs.status, 'running'),
    lt(runs.leaseExpiresAt, sql`now()`),
    grace ? availableFor(grace) : undefined,
  );
  const lostAt = sql`to_char(${runs.leaseExpiresAt} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"')`;
  const cancelled = await sweep(db, and(expired, eq(runs.cancelRequested, true)), {
    status: sql`${runs.cancelAs}`,
    statusReason: sql`${runs.cancelReason}`,
    leaseId: null,
    ...finishedNow(),
  });
  const live = and(expired, eq(runs.cancelRequested, false));
  const tookButNeverStarted = sql`'Runner ' || ${runs.runnerName} || ' took the run but stopped reporting before starting it'`;
  const neverStarted = await sweep(db, and(live, isNull(runs.startedAt), mayBeReleasedAgain), {
    ...requeuedNow(sql`${tookButNeverStarted} || '; queued again'`),
    releases: sql`${runs.releases} + 1`,
  });
  const neverStartedTooOften = await sweep(db, and(live, isNull(runs.startedAt), not(mayBeReleasedAgain)), {
    status: 'abandoned',
    statusReason: releaseLimitReason(tookButNeverStarted),
    leaseId: null,
    releases: sql`${runs.releases} + 1`,
    ...finishedNow(),
  });
  const retried = await sweep(
    db,
    and(live, isNotNull(runs.startedAt), lt(runs.leaseExpirations, runs.retries)),
    {
      ...requeuedNow(
        sql`'Runner ' || ${runs.runnerName} || ' stopped reporting; its lease expired at ' || ${lostAt}
        || '; queued again (retry ' || (${runs.leaseExpirations} + 1) || ' of ' || ${runs.retries} || ')'`,
      ),
      leaseExpirations: sql`${runs.leaseExpirations} + 1`,
    },
  );
  const abandoned = await sweep(
    db,
    and(live, isNotNull(runs.startedAt), not(lt(runs.leaseExpirations, runs.retries))),
    {
      status: 'abandoned',
      statusReason: sql`'Runner ' || ${runs.runnerName} || ' stopped reporting; its lease expired at ' || ${lostAt}`,
      leaseId: null,
      leaseExpirations: sql`${runs.leaseExpirations} + 1`,
      ...finishedNow(),
    },
  );
  return { cancelled, neverStarted, neverStartedTooOften, retried, abandoned };
}

/**
 * Applies `changes` to the runs matching `condition`, locking them `SKIP LOCKED` and
 * checking `condition` again in the update itself; returns the ids changed.
 */
async function sweep(
  db: Database,
  condition: SQL | undefined,
  changes: PgUpdateSetSource<typeof runs>,
): Promise<string[]> {
  const locked = db.select({ id: runs.id }).from(runs).where(condition).for('update', { skipLocked: true });
  const changed = await db
    .update(runs)
    .set(changes)
    .where(and(inArray(runs.id, locked), condition))
    .returning({ id: runs.id });
  return changed.map((run) => run.id);
}
