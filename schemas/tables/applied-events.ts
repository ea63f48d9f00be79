import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * The runner events applied so far, by `(run, attempt, seq)` (DESIGN §6): a runner resends
 * a batch until it is acknowledged, and an event already listed here is not applied again.
 */
export const appliedEvents = pgTable(
  'applied_events',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    seq: integer('seq').notNull(),
  },
  (table) => [primaryKey({ name: 'applied_events_pkey', columns: [table.runId, table.attempt, table.seq] })],
);
export type AppliedEventRow = typeof appliedEvents.$inferSelect;
export type NewAppliedEventRow = typeof appliedEvents.$inferInsert;
