import { and, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Params } from '../../core/params/resolve-params.js';
import { paramsMismatch } from '../../core/params/params-mismatch.js';
import { annotations } from '../../schemas/tables/annotations.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { finishedNow } from '../runs/finished-now.js';
import { heldUnderLease, type LeaseFence } from './held-under-lease.js';

/**
 * Records that the runner holding `leaseId` verified its checkout and begins the run:
 * `started_at` by the database's clock, the code and env digests computed where the run
 * executes (DESIGN §5), and how the runner sandboxes its stages. Until then a claimed run
 * goes back to the queue without using a retry when its runner vanishes.
 *
 * The params are those the runner resolved at the commit. When they are not the params
 * the run was queued with (params-mismatch.ts), the run fails here with the reason naming
 * each difference, and nothing may run: what ran must be what was asked for. Otherwise
 * they replace the queued ones (they add the defaults a submitter left out), so the run
 * shows and is compared by what ran.
 *
 * A later attempt starts from a clean record: the stages, metric points and annotations of
 * the attempt before are dropped (its cache entries stay: they are sound results), so
 * nothing it reported is shown twice or mixed into this one. Starting again under the same
 * lease (a retried request whose answer was lost) returns the run as the first start left
 * it. Null for a stale lease (another, or an older epoch of this one: heldUnderLease) or a
 * run that is not running.
 */
export async function startLeasedRun({
  db,
  runId,
  leaseId,
  leaseEpoch,
  codeDigest,
  envDigest,
  params,
  paramsDigest,
  sandbox = null,
}: LeaseFence & {
  db: Database;
  codeDigest: string;
  envDigest: string;
  /** The params the runner resolved, and their digest (canonical JSON). */
  params: Params;
  paramsDigest: string;
  /** How the runner isolates the stages; null when it does not. */
  sandbox?: string | null;
}): Promise<Run | null> {
  const leased = heldUnderLease({ runId, leaseId, leaseEpoch });
  return db.transaction(async (tx) => {
    const [queued] = await tx
      .select({ params: runs.params, paramsDigest: runs.paramsDigest })
      .from(runs)
      .where(and(leased, eq(runs.status, 'running'), isNull(runs.startedAt)))
      .for('update');
    if (!queued) {
      // A start retried under its lease: the run as that start left it (failed, when it
      // failed there), still held by this lease.
      const [already] = await tx
        .select()
        .from(runs)
        .where(and(leased, isNotNull(runs.startedAt)));
      return already ?? null;
    }
    const mismatch = queued.paramsDigest === paramsDigest ? null : paramsMismatch(queued.params, params);
    const [started] = await tx
      .update(runs)
      .set({
        startedAt: sql`now()`,
        codeDigest,
        envDigest,
        sandbox,
        dirty: false,
        ...(mismatch === null
          ? { params, paramsDigest }
          : { status: 'failed', statusReason: mismatch.slice(0, 4000), ...finishedNow(), durationMs: 0 }),
      })
      .where(leased)
      .returning();
    if (!started) throw new Error(`Run ${runId} vanished while it was being started`);
    if (started.attempt > 1) {
      await tx.delete(stages).where(eq(stages.runId, runId));
      await tx.delete(metricPoints).where(eq(metricPoints.runId, runId));
      await tx.delete(annotations).where(eq(annotations.runId, runId));
      // GitHub keeps the annotations it was sent (they cannot be taken back); this
      // attempt's are counted from zero, so they are sent too, after those. How many
      // GitHub holds before them is unknown until the outbox reads it (null).
      await tx
        .update(githubChecks)
        .set({ annotationsSent: 0, annotationsOffset: null, annotationsAttempt: started.attempt })
        .where(eq(githubChecks.runId, runId));
      await tx
        .delete(appliedEvents)
        .where(and(eq(appliedEvents.runId, runId), lt(appliedEvents.attempt, started.attempt)));
    }
    return started;
  });
}
