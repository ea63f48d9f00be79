import { bigint, boolean, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** An installation of the GitHub App, as its `installation` events last described it. */
export const installations = pgTable('installations', {
  /** GitHub's installation id (beyond 32 bits). */
  id: bigint('id', { mode: 'number' }).primaryKey(),
  /** The account (user or organisation) it is installed on. */
  owner: text('owner').notNull(),
  suspended: boolean('suspended').notNull().default(false),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
export type InstallationRow = typeof installations.$inferSelect;
export type NewInstallationRow = typeof installations.$inferInsert;
