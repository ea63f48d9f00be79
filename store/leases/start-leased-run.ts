import { and, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { annotations } from '../../schemas/tables/annotations.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';

/**
 * Records that the runner holding `leaseId` verified its checkout and begins the run:
 * `started_at` by the database's clock, and the code and env digests computed where the
 * run executes (DESIGN §5), and how the runner sandboxes its stages. Until then a claimed run goes back to the queue without using
 * a retry when its runner vanishes. A later attempt starts from a clean record: the stages,
 * metric points and annotations of the attempt before are dropped (its cache entries stay:
 * they are sound results), so nothing it reported is shown twice or mixed into this one.
 * Starting again under the same lease (a retried request whose answer was lost) returns the
 * run as the first start left it. Null for a stale lease or a run that is not running.
 */
export async function startLeasedRun({
  db,
  runId,
  leaseId,
  codeDigest,
  envDigest,
  sandbox = null,
}: {
  db: Database;
  runId: string;
  leaseId: string;
  codeDigest: string;
  envDigest: string;
  /** How the runner isolates the stages; null when it does not. */
  sandbox?: string | null;
}): Promise<Run | null> {
  const held = and(eq(runs.id, runId), eq(runs.leaseId, leaseId), eq(runs.status, 'running'));
  return db.transaction(async (tx) => {
    const [started] = await tx
      .update(runs)
      .set({ startedAt: sql`now()`, codeDigest, envDigest, sandbox, dirty: false })
      .where(and(held, isNull(runs.startedAt)))
      .returning();
    if (!started) {
      const [already] = await tx
        .select()
        .from(runs)
        .where(and(held, isNotNull(runs.startedAt)));
      return already ?? null;
    }
    if (started.attempt > 1) {
      await tx.delete(stages).where(eq(stages.runId, runId));
      await tx.delete(metricPoints).where(eq(metricPoints.runId, runId));
      await tx.delete(annotations).where(eq(annotations.runId, runId));
      // GitHub keeps the annotations it was sent (they cannot be taken back); this
      // attempt's are counted from zero, so they are sent too, after those.
      await tx.update(githubChecks).set({ annotationsSent: 0 }).where(eq(githubChecks.runId, runId));
      await tx
        .delete(appliedEvents)
        .where(and(eq(appliedEvents.runId, runId), lt(appliedEvents.attempt, started.attempt)));
    }
    return started;
  });
}
