import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import type { KeyInputs } from '../key-inputs.js';
import type { OutRecord } from '../out-record.js';

/**
 * The stage cache (DESIGN §5): cache key → what a successful execution produced, scoped
 * to one repository and one trust domain. Written only from a stage's own finish event.
 */
export const cacheEntries = pgTable(
  'cache_entries',
  {
    repository: text('repository').notNull(),
    trustDomain: text('trust_domain').notNull(),
    key: text('key').notNull(),
    stage: text('stage').notNull(),
    /** Not a foreign key: an entry outlives its run's row until gc drops it. */
    runId: text('run_id').notNull(),
    outs: jsonb('outs').$type<OutRecord[]>().notNull(),
    metrics: jsonb('metrics').$type<Record<string, number>>().notNull(),
    keyInputs: jsonb('key_inputs').$type<KeyInputs>().notNull(),
    /**
     * For a traced stage, its manifest key (core/manifest-key.ts): the entries a lookup
     * checks the read sets (in key_inputs) of. Null for an untraced stage, found by key alone.
     */
    manifestKey: text('manifest_key'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'cache_entries_pkey', columns: [table.repository, table.trustDomain, table.key] }),
    // "Why it re-ran" asks for the most recent entry of a stage name.
    index('cache_entries_latest_idx').on(table.repository, table.trustDomain, table.stage, table.createdAt),
    index('cache_entries_manifest_idx').on(
      table.repository,
      table.trustDomain,
      table.manifestKey,
      table.createdAt,
    ),
  ],
);
export type CacheEntryRow = typeof cacheEntries.$inferSelect;
export type NewCacheEntryRow = typeof cacheEntries.$inferInsert;
