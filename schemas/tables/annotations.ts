import { bigint, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import type { Annotation } from '../annotation.js';
import { runs } from './runs.js';

/** Messages pinned to repository lines, from tracebacks and `::error file=…,line=…::` commands. */
export const annotations = pgTable(
  'annotations',
  {
    /** Insertion order is the order a run reported them in. */
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    stage: text('stage').notNull(),
    path: text('path'),
    line: integer('line'),
    level: text('level').$type<Annotation['level']>().notNull(),
    message: text('message').notNull(),
    title: text('title'),
  },
  (table) => [index('annotations_run_id_idx').on(table.runId)],
);
export type AnnotationRow = typeof annotations.$inferSelect;
export type NewAnnotationRow = typeof annotations.$inferInsert;
