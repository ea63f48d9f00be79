import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * A stage's output on a control plane, as the runner sent it: one row per `stage.log`
 * event, its lines already masked. Read back by `GET /api/v1/runs/:id/logs/:stage`.
 */
export const logLines = pgTable(
  'log_lines',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    stage: text('stage').notNull(),
    /** The event's seq: the order the lines were printed in. */
    seq: integer('seq').notNull(),
    lines: text('lines').array().notNull(),
  },
  // Stage before attempt and seq: a stage's log is read as one range of this key.
  (table) => [
    primaryKey({ name: 'log_lines_pkey', columns: [table.runId, table.stage, table.attempt, table.seq] }),
  ],
);
export type LogLinesRow = typeof logLines.$inferSelect;
export type NewLogLinesRow = typeof logLines.$inferInsert;
