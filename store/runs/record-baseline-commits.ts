import { and, eq, isNull } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Records where a run's baseline may be (nearest first) and the pull request's merge-base,
 * as the GitHub App's lookup found them: once — what is recorded already is never
 * overwritten, so every reader sees the first answer. Returns the run as stored (with the
 * commits recorded first), or null for an unknown run.
 */
export async function recordBaselineCommits({
  db,
  runId,
  commits,
  mergeBase,
}: {
  db: Database;
  runId: string;
  commits: readonly string[];
  mergeBase: string | null;
}): Promise<Run | null> {
  const [recorded] = await db
    .update(runs)
    .set({ baselineCommits: [...commits], baselineMergeBase: mergeBase })
    .where(and(eq(runs.id, runId), isNull(runs.baselineCommits)))
    .returning();
  if (recorded) return recorded;
  const [run] = await db.select().from(runs).where(eq(runs.id, runId));
  return run ?? null;
}
