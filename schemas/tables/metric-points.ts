import { doublePrecision, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
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
    step: integer('step').notNull(),
    value: doublePrecision('value').notNull(),
  },
  (table) => [
    primaryKey({ name: 'metric_points_pkey', columns: [table.runId, table.stage, table.name, table.step] }),
  ],
);
export type MetricPointRow = typeof metricPoints.$inferSelect;
export type NewMetricPointRow = typeof metricPoints.$inferInsert;
