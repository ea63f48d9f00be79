import { eq } from 'drizzle-orm';
import { githubNotices } from '../../schemas/tables/github-notices.js';
import type { Database } from '../db/database.js';

/** Records the id of a notice's check run as soon as it was created or adopted. */
export async function recordNoticeCheckRun({
  db,
  id,
  checkRunId,
}: {
  db: Database;
  id: string;
  checkRunId: number;
}): Promise<void> {
  await db.update(githubNotices).set({ checkRunId }).where(eq(githubNotices.id, id));
}
