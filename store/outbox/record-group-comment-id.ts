import { eq } from 'drizzle-orm';
import { groupComments } from '../../schemas/tables/group-comments.js';
import type { Database } from '../db/database.js';

/**
 * Records the id of a sweep's comment as soon as it was created or found again by its
 * marker; null forgets it (the comment was deleted on GitHub, so it is made again).
 */
export async function recordGroupCommentId({
  db,
  groupId,
  commentId,
}: {
  db: Database;
  groupId: string;
  commentId: number | null;
}): Promise<void> {
  await db.update(groupComments).set({ commentId }).where(eq(groupComments.groupId, groupId));
}
