import { sql } from 'drizzle-orm';
import { pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** What an API token lets a submitter do: read runs, or also submit and cancel them. */
export type ApiTokenScope = 'read' | 'submit';

/**
 * A submitter's API token (DESIGN §6), stored as sha256 hex and scoped to repositories.
 * A revoked token is kept (for the record) and never authenticates again.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    /** A ULID. */
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** `owner/name` of the repositories it may act on; never empty. */
    repositories: text('repositories').array().notNull(),
    scope: text('scope').$type<ApiTokenScope>().notNull(),
    tokenHash: text('token_hash').notNull().unique('api_tokens_token_hash_unique'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [
    // Unique among live tokens only, so a leaked token can be revoked and replaced under its name.
    uniqueIndex('api_tokens_live_name_unique')
      .on(table.name)
      .where(sql`revoked_at is null`),
  ],
);
export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type NewApiTokenRow = typeof apiTokens.$inferInsert;
