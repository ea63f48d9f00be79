import { bigint, doublePrecision, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * The series a stage streams with `::metric name=loss::0.25` (DESIGN §7). Only the run
 * that executed a stage holds its points: a stage restored from the cache holds none.
 */
export const metricPoints = pgTable(
  'metric_points',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    stage: text('stage').notNull(),
    name: text('name').notNull(),
    /** Any step up to 2^53 (`::metric` accepts them): a count of tokens or samples seen is one. */
    step: bigint('step', { mode: 'number' }).notNull(),
    value: doublePrecision('value').notNull(),
    /** When the stage printed it, ms since the epoch; null for points from runners that did not say. */
    at: bigint('at', { mode: 'number' }),
  },
  (table) => [
    primaryKey({ name: 'metric_points_pkey', columns: [table.runId, table.stage, table.name, table.step] }),
  ],
);
export type MetricPointRow = typeof metricPoints.$inferSelect;
export type NewMetricPointRow = typeof metricPoints.$inferInsert;
