import {
  boolean,
  doublePrecision,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import type { JobPending } from '../job-pending.js';
import type { KeyInputs } from '../key-inputs.js';
import type { OutRecord } from '../out-record.js';
import type { StageStatus } from '../statuses.js';
import type { StageUsage } from '../stage-usage.js';
import { runs } from './runs.js';

/** What each stage of a run did: a StageRecord (schemas/stage-record.ts) plus its place in the run. */
export const stages = pgTable(
  'stages',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Order of first appearance in the run's events, so a run reads back in execution order. */
    position: integer('position').notNull(),
    status: text('status').$type<StageStatus>().notNull(),
    cacheKey: text('cache_key'),
    keyInputs: jsonb('key_inputs').$type<KeyInputs>(),
    /**
     * The run whose execution produced a cached stage's outputs. Not a foreign key: that
     * run may be deleted while this record still says where the outputs came from.
     */
    cachedFrom: text('cached_from'),
    /** Whether a cached stage's entry came from the team's cache (`fluksio run --remote-cache`). */
    cachedFromTeam: boolean('cached_from_team').notNull().default(false),
    reasons: jsonb('reasons').$type<string[]>().notNull().default([]),
    notes: jsonb('notes').$type<string[]>().notNull().default([]),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    durationMs: doublePrecision('duration_ms').notNull().default(0),
    exitCode: integer('exit_code'),
    outs: jsonb('outs').$type<OutRecord[]>().notNull().default([]),
    metrics: jsonb('metrics').$type<Record<string, number>>().notNull().default({}),
    logTail: text('log_tail').notNull().default(''),
    logDigest: text('log_digest'),
    error: text('error'),
    dirtyReasons: jsonb('dirty_reasons').$type<string[]>().notNull().default([]),
    warnings: jsonb('warnings').$type<string[]>().notNull().default([]),
    /** What the stage's Slurm job used; null for a stage that ran no job. */
    usage: jsonb('usage').$type<StageUsage>(),
    /** Why the running stage's Slurm job waits in the queue; null when it does not (stage.pending events). */
    pending: jsonb('pending').$type<JobPending>(),
  },
  (table) => [primaryKey({ name: 'stages_pkey', columns: [table.runId, table.name] })],
);
export type StageRow = typeof stages.$inferSelect;
export type NewStageRow = typeof stages.$inferInsert;
