import { bigint, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';

/** Why a commit got an `action_required` check run instead of a run (DESIGN §6). */
export type NoticeKind = 'approval' | 'broken-pipeline';

/**
 * An `action_required` check run that is no run (DESIGN §6, §8): a fork's pull request
 * waiting for a maintainer's `/fluksio run --sha <head>`, or a `fluksio.yml` that does
 * not validate at a commit. Its id is made from what it is about, so a redelivery makes
 * no second one; the outbox sends it as it sends runs' check runs.
 */
export const githubNotices = pgTable('github_notices', {
  /** `<kind>:<repository>:<head_sha>`. */
  id: text('id').primaryKey(),
  installationId: bigint('installation_id', { mode: 'number' }).notNull(),
  repository: text('repository').notNull(),
  headSha: text('head_sha').notNull(),
  name: text('name').notNull(),
  kind: text('kind').$type<NoticeKind>().notNull(),
  /** What renderActionRequired renders. */
  body: jsonb('body').$type<Record<string, unknown>>().notNull(),
  checkRunId: bigint('check_run_id', { mode: 'number' }),
  renderVersion: integer('render_version').notNull().default(1),
  sentVersion: integer('sent_version').notNull().default(0),
});
export type GitHubNoticeRow = typeof githubNotices.$inferSelect;
export type NewGitHubNoticeRow = typeof githubNotices.$inferInsert;
