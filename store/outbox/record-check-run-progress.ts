import { and, eq, sql } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import type { Database } from '../db/database.js';

/**
 * Records, right after GitHub accepted a write to a run's check run, its id (once created
 * or adopted), how many annotations it holds and the status it shows, so a retry neither
 * creates it again nor appends annotations twice. `updated_at` becomes now: the time of the
 * last write to GitHub, from which the outbox spaces in-progress refreshes.
 *
 * Only while the check still counts `attempt`'s annotations: false, recording nothing, when
 * a later attempt started (and reset the count) while this sync was in flight.
 */
export async function recordCheckRunProgress({
  db,
  runId,
  attempt,
  checkRunId,
  annotationsSent,
  status,
}: {
  db: Database;
  runId: string;
  attempt: number;
  checkRunId: number;
  annotationsSent: number;
  status: 'queued' | 'in_progress' | 'completed';
}): Promise<boolean> {
  const updated = await db
    .update(githubChecks)
    .set({ checkRunId, annotationsSent, sentStatus: status, updatedAt: sql`now()` })
    .where(and(eq(githubChecks.runId, runId), eq(githubChecks.annotationsAttempt, attempt)))
    .returning({ runId: githubChecks.runId });
  return updated.length > 0;
}
