import { eq, sql } from 'drizzle-orm';
import { runners, type RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../db/database.js';

/**
 * The runner a request's bearer token (as sha256 hex) belongs to, or null. Seeing it is
 * also what keeps it online: `last_seen_at` is set to the database's `now()` in the same
 * statement, for the online gauge and for the reasons queued runs give.
 */
export async function findRunnerByTokenHash({
  db,
  tokenHash,
}: {
  db: Database;
  tokenHash: string;
}): Promise<RunnerRow | null> {
  const [runner] = await db
    .update(runners)
    .set({ lastSeenAt: sql`now()` })
    .where(eq(runners.tokenHash, tokenHash))
    .returning();
  return runner ?? null;
}
