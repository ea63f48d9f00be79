import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import type { ParamValue } from '../key-inputs.js';
import type { RunStatus } from '../statuses.js';

/**
 * One execution of a pipeline at one commit with one parameter set (DESIGN §1). The
 * stamp columns (commit, dirty, code/params/env digests) say exactly what ran.
 */
export const runs = pgTable(
  'runs',
  {
    /** A ULID: time-ordered, so a prefix of it names a run the way a short SHA names a commit. */
    id: text('id').primaryKey(),
    /** `owner/name` on a server; `local` for the embedded store. */
    repository: text('repository').notNull(),
    /** Repository-relative path of the pipeline file. */
    pipelinePath: text('pipeline_path').notNull(),
    /** `trusted` or `pr:<n>`: which cache entries the run may read and writes. */
    trustDomain: text('trust_domain').notNull().default('trusted'),
    /** The sweep this run belongs to, and its place in the sweep's grid. */
    groupId: text('group_id'),
    groupIndex: integer('group_index'),
    /** The exact SHA; null in a repository without commits. */
    commit: text('commit'),
    /** Whether the working tree differed from `commit` (local runs only). */
    dirty: boolean('dirty').notNull().default(false),
    /**
     * Null until the run starts: the code and env digests are computed where the run
     * executes, when it starts (DESIGN §5), so a queued server run has none yet.
     */
    codeDigest: text('code_digest'),
    params: jsonb('params').$type<Record<string, ParamValue>>().notNull(),
    paramsDigest: text('params_digest').notNull(),
    envDigest: text('env_digest'),
    noCache: boolean('no_cache').notNull().default(false),
    status: text('status').$type<RunStatus>().notNull(),
    /** Why the run is in its state: `Waiting for a runner labelled gpu`, a failure's sentence. */
    statusReason: text('status_reason'),
    /** A runner must carry every one of these. */
    labels: text('labels')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** `delivery:gridIndex` or a submitter's Idempotency-Key: a redelivery makes no second run. */
    triggerKey: text('trigger_key').unique('runs_trigger_key_unique'),
    attempt: integer('attempt').notNull().default(1),
    /** The run's final metrics, flattened to dotted names. */
    metrics: jsonb('metrics').$type<Record<string, number>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    durationMs: doublePrecision('duration_ms'),
  },
  (table) => [
    index('runs_repository_pipeline_path_commit_idx').on(table.repository, table.pipelinePath, table.commit),
    index('runs_status_idx').on(table.status),
    index('runs_group_id_idx').on(table.groupId),
  ],
);
export type Run = typeof runs.$inferSelect;
export type NewRun = typeof runs.$inferInsert;
