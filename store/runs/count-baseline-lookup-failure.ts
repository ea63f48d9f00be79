import { and, eq, isNull, notInArray, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Counts a failed lookup of where a finished run's baseline may be. Returns the run as
 * stored, or null when there was nothing to count: the run is unfinished, its commits are
 * recorded or its baseline is fixed already.
 */
export async function countBaselineLookupFailure({
  db,
  runId,
}: {
  db: Database;
  runId: string;
}): Promise<Run | null> {
  const [counted] = await db
    .update(runs)
    .set({ baselineLookupFailures: sql`${runs.baselineLookupFailures} + 1` })
    .where(
      and(
        eq(runs.id, runId),
        isNull(runs.baselineCommits),
        eq(runs.baselineFixed, false),
        notInArray(runs.status, ['queued', 'running']),
      ),
    )
    .returning();
  return counted ?? null;
}
