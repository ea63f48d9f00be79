import { sql } from 'drizzle-orm';
import { boolean, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * A registered runner (DESIGN §6): its token (as sha256 hex) is bound to an owner, optionally
 * to some of the owner's repositories, and to the labels registered with it.
 */
export const runners = pgTable('runners', {
  /** A ULID. */
  id: text('id').primaryKey(),
  name: text('name').notNull().unique('runners_name_unique'),
  /** The GitHub owner (user or organisation) whose repositories it may run. */
  owner: text('owner').notNull(),
  /** `owner/name` of the repositories it may run; empty means every repository of the owner. */
  repositories: text('repositories')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  /** A run's labels must all be among these. */
  labels: text('labels')
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  tokenHash: text('token_hash').notNull().unique('runners_token_hash_unique'),
  /**
   * Whether its daemon last asked for work with `--accept-forks`: recorded at each claim so
   * that a queued fork run can say whether an online runner would take it.
   */
  acceptsForks: boolean('accepts_forks').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /** The last authenticated request; a runner seen within the online window counts as online. */
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true }),
  /**
   * The fluksio version the last of its requests that named one gave in `User-Agent`
   * (`fluksio/0.1.0 …`); null while none has (an older client, or never seen): which
   * runners still run an old version, while upgrading.
   */
  version: text('version'),
});
export type RunnerRow = typeof runners.$inferSelect;
export type NewRunnerRow = typeof runners.$inferInsert;
