import { eq } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import type { Database } from '../db/database.js';

/**
 * Records how many annotations a run's check run held on GitHub before its current
 * attempt's, read before any of them is sent, so a retried sync that must ask GitHub how
 * many it holds can tell the current attempt's from those of an earlier one.
 */
export async function recordAnnotationsOffset({
  db,
  runId,
  annotationsOffset,
}: {
  db: Database;
  runId: string;
  annotationsOffset: number;
}): Promise<void> {
  await db.update(githubChecks).set({ annotationsOffset }).where(eq(githubChecks.runId, runId));
}
