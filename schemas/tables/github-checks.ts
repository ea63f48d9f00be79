import { bigint, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/**
 * The check run of a run on GitHub (DESIGN §8), kept by the outbox: `render_version` goes
 * up whenever the run changed, `sent_version` records what GitHub last accepted, so the
 * outbox sends again while they differ and no final state is lost.
 */
export const githubChecks = pgTable(
  'github_checks',
  {
    runId: text('run_id')
      .primaryKey()
      .references(() => runs.id, { onDelete: 'cascade' }),
    installationId: bigint('installation_id', { mode: 'number' }).notNull(),
    /** `owner/name`. */
    repository: text('repository').notNull(),
    headSha: text('head_sha').notNull(),
    /** The check run's name: `fluksio`, or `fluksio (lr=0.1)` for a sweep member. */
    name: text('name').notNull(),
    /** GitHub's id, once created (or adopted by `external_id`). */
    checkRunId: bigint('check_run_id', { mode: 'number' }),
    renderVersion: integer('render_version').notNull().default(1),
    sentVersion: integer('sent_version').notNull().default(0),
    /** How many of the run's annotations GitHub has (they go 50 per request). */
    annotationsSent: integer('annotations_sent').notNull().default(0),
    /**
     * How many annotations GitHub held before the current attempt's (a retried run's
     * attempts share one check run, and GitHub keeps what it was sent): 0 for the first
     * attempt, null — unknown — once a later attempt starts, until the outbox reads
     * GitHub's count before it sends anything of that attempt.
     */
    annotationsOffset: integer('annotations_offset').default(0),
    /**
     * The run's attempt that `annotations_sent` and `annotations_offset` count for: a later
     * attempt's start resets them and sets it, and a sync of an earlier attempt still in
     * flight may no longer record its progress over the reset (record-check-run-progress.ts).
     */
    annotationsAttempt: integer('annotations_attempt').notNull().default(1),
    /**
     * The status GitHub last accepted (`queued`, `in_progress`, `completed`): only refreshes
     * of a check run already shown in progress are spaced; the change into it goes at once.
     */
    sentStatus: text('sent_status'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [index('github_checks_repository_head_sha_idx').on(table.repository, table.headSha)],
);
export type GitHubCheckRow = typeof githubChecks.$inferSelect;
export type NewGitHubCheckRow = typeof githubChecks.$inferInsert;
