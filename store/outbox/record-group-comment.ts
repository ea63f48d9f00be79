import { groupComments } from '../../schemas/tables/group-comments.js';
import type { Database } from '../db/database.js';

/**
 * Records that a sweep's group has a comparison comment on its pull request (DESIGN §8),
 * unless recorded already; the outbox creates and edits the comment itself.
 */
export async function recordGroupComment({
  db,
  group,
}: {
  db: Database;
  group: { groupId: string; installationId: number; repository: string; prNumber: number };
}): Promise<void> {
  await db.insert(groupComments).values(group).onConflictDoNothing({ target: groupComments.groupId });
}
