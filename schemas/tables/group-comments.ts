import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * The pull-request comment of a sweep (DESIGN §8): created when the group is queued and
 * edited in place as its runs finish, by the outbox, with the same render/sent versions
 * as check runs.
 */
export const groupComments = pgTable('group_comments', {
  groupId: text('group_id').primaryKey(),
  installationId: bigint('installation_id', { mode: 'number' }).notNull(),
  repository: text('repository').notNull(),
  prNumber: integer('pr_number').notNull(),
  /** GitHub's id, once created (or found again by its hidden marker). */
  commentId: bigint('comment_id', { mode: 'number' }),
  renderVersion: integer('render_version').notNull().default(1),
  sentVersion: integer('sent_version').notNull().default(0),
});
export type GroupCommentRow = typeof groupComments.$inferSelect;
export type NewGroupCommentRow = typeof groupComments.$inferInsert;
