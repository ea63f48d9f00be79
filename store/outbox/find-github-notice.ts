import { eq } from 'drizzle-orm';
import { githubNotices, type GitHubNoticeRow } from '../../schemas/tables/github-notices.js';
import type { Database } from '../db/database.js';

/** An `action_required` notice with what the outbox sent of it; null for an unknown id. */
export async function findGitHubNotice({
  db,
  id,
}: {
  db: Database;
  id: string;
}): Promise<GitHubNoticeRow | null> {
  const [row] = await db.select().from(githubNotices).where(eq(githubNotices.id, id));
  return row ?? null;
}
