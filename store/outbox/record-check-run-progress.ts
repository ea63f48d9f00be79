import { eq, sql } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import type { Database } from '../db/database.js';

/**
 * Records, right after GitHub accepted a write to a run's check run, its id (once created
 * or adopted), how many annotations it holds and the status it shows, so a retry neither
 * creates it again nor appends annotations twice. `updated_at` becomes now: the time of the last write to
 * GitHub, from which the outbox spaces in-progress refreshes.
 */
export async function recordCheckRunProgress({
  db,
  runId,
  checkRunId,
  annotationsSent,
  status,
}: {
  db: Database;
  runId: string;
  checkRunId: number;
  annotationsSent: number;
  status: 'queued' | 'in_progress' | 'completed';
}): Promise<void> {
  await db
    .update(githubChecks)
    .set({ checkRunId, annotationsSent, sentStatus: status, updatedAt: sql`now()` })
    .where(eq(githubChecks.runId, runId));
}
