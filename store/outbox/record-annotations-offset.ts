import { and, eq } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import type { Database } from '../db/database.js';

/**
 * Records how many annotations a run's check run held on GitHub before its current
 * attempt's, read before any of them is sent, so a retried sync that must ask GitHub how
 * many it holds can tell the current attempt's from those of an earlier one. Only while the
 * check still counts `attempt`'s: false, recording nothing, once a later attempt started.
 */
export async function recordAnnotationsOffset({
  db,
  runId,
  attempt,
  annotationsOffset,
}: {
  db: Database;
  runId: string;
  attempt: number;
  annotationsOffset: number;
}): Promise<boolean> {
  const updated = await db
    .update(githubChecks)
    .set({ annotationsOffset })
    .where(and(eq(githubChecks.runId, runId), eq(githubChecks.annotationsAttempt, attempt)))
    .returning({ runId: githubChecks.runId });
  return updated.length > 0;
}
