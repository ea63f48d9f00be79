import { eq } from 'drizzle-orm';
import { groupComments, type GroupCommentRow } from '../../schemas/tables/group-comments.js';
import type { Database } from '../db/database.js';

/** A sweep's pull-request comment as the outbox keeps it; null for a group that has none. */
export async function findGroupComment({
  db,
  groupId,
}: {
  db: Database;
  groupId: string;
}): Promise<GroupCommentRow | null> {
  const [row] = await db.select().from(groupComments).where(eq(groupComments.groupId, groupId));
  return row ?? null;
}
