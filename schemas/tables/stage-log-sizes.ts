import { bigint, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * How many bytes of log lines a runner offered for one stage of one attempt (log_lines),
 * kept or not: the control plane keeps at most its limit of a stage's log, whatever a
 * runner sends (apply-run-events.ts), without reading back what it stored.
 */
export const stageLogSizes = pgTable(
  'stage_log_sizes',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    stage: text('stage').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
  },
  (table) => [
    primaryKey({ name: 'stage_log_sizes_pkey', columns: [table.runId, table.attempt, table.stage] }),
  ],
);
export type StageLogSizeRow = typeof stageLogSizes.$inferSelect;
