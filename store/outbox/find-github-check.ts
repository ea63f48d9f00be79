import { eq } from 'drizzle-orm';
import { githubChecks, type GitHubCheckRow } from '../../schemas/tables/github-checks.js';
import type { Database } from '../db/database.js';

/** The outbox's record of a run's check run; null for a run that has none. */
export async function findGitHubCheck({
  db,
  runId,
}: {
  db: Database;
  runId: string;
}): Promise<GitHubCheckRow | null> {
  const [row] = await db.select().from(githubChecks).where(eq(githubChecks.runId, runId));
  return row ?? null;
}
