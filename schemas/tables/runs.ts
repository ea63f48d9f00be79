import { sql } from 'drizzle-orm';
import {
  bigint,
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
import type { MetricGoals } from '../metric-diff.js';
import type { RunStatus } from '../statuses.js';
import type { StageSelection } from '../stage-selection.js';

/**
 * What made a run: a push or a pull request's event (automatic), a `/fluksio run`
 * comment, a re-run button, or the submit API. Null for local runs.
 */
export type RunTrigger = 'push' | 'pull_request' | 'comment' | 'rerun' | 'submit';

/** The state a requested cancel finishes a run in: a user's cancel, or its time limit. */
export type CancelAs = 'cancelled' | 'timed_out';

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
     * What changed in the code while the run's stages ran (issue 8, defect 1): such a run
     * executed more than one version of it, and is dirty whatever its start said.
     */
    dirtyReasons: jsonb('dirty_reasons').$type<string[]>().notNull().default([]),
    /**
     * Null until the run starts: the code and env digests are computed where the run
     * executes, when it starts (DESIGN §5), so a queued server run has none yet.
     */
    codeDigest: text('code_digest'),
    params: jsonb('params').$type<Record<string, ParamValue>>().notNull(),
    paramsDigest: text('params_digest').notNull(),
    envDigest: text('env_digest'),
    /**
     * How the runner isolated the stages, as it said when the run started (`bubblewrap
     * 0.8.0: …`); null for stages run unsandboxed, or a run not started on a runner.
     */
    sandbox: text('sandbox'),
    noCache: boolean('no_cache').notNull().default(false),
    /**
     * The stages a local run was asked for when it ran fewer than all of them (`fluksio run
     * train`); null for a run of every stage. A partial run is never another run's baseline.
     */
    selection: jsonb('selection').$type<StageSelection>(),
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
    /** How a runner fetches the commit; null for local runs (DESIGN §6). */
    cloneUrl: text('clone_url'),
    /** A ref to fetch when the commit is on no branch (a fork's `refs/pull/<n>/head`). */
    fetchRef: text('fetch_ref'),
    /** A fork's pull request: only runners started with `--accept-forks` take it. */
    fork: boolean('fork').notNull().default(false),
    /** Times the run is queued again after its runner vanished mid-run (`retries:` in fluksio.yml). */
    retries: integer('retries').notNull().default(0),
    /** How many times a started attempt's lease expired: compared with `retries` by the sweeper. */
    leaseExpirations: integer('lease_expirations').notNull().default(0),
    /**
     * How many times the run went back to the queue without using a retry: released by its
     * runner (SIGTERM), or taken and never started. Capped (store/release-limit.ts), so a
     * runner restarting in a loop cannot give one run back forever.
     */
    releases: integer('releases').notNull().default(0),
    /** The run's whole time limit, counted from `started_at`. */
    timeoutMs: integer('timeout_ms').notNull().default(86_400_000),
    /**
     * When the run last entered `queued` (created, released, requeued): the queue timeout
     * counts from here, so a run queued again after hours of running is not expired at once.
     */
    queuedAt: timestamp('queued_at', { withTimezone: true }).notNull().defaultNow(),
    /** The fencing token of the current claim (DESIGN §6); every runner write must carry it. */
    leaseId: text('lease_id'),
    /**
     * How many times the runner holding the lease was restarted and resumed the run under
     * it (resume-leased-run.ts); a claim starts it at 0. Every write that changes the run's
     * state carries it, and one from an older epoch is stale: the dead process's requests
     * still in flight cannot land among the events the resumed one numbers.
     */
    leaseEpoch: integer('lease_epoch').notNull().default(0),
    /** Renewed by heartbeats; past it, the sweeper takes the run back. */
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    claimedAt: timestamp('claimed_at', { withTimezone: true }),
    /** The runner that holds or last held the run. */
    runnerName: text('runner_name'),
    /** Set for a running run by a cancel or by its timeout; the runner learns it from its heartbeat. */
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    cancelReason: text('cancel_reason'),
    /** The final state a requested cancel ends the run in. */
    cancelAs: text('cancel_as').$type<CancelAs>(),
    /** The API token (its name) or user that submitted the run. */
    submittedBy: text('submitted_by'),
    /** The GitHub App installation that fetches the code and reports the check run; null off GitHub. */
    installationId: bigint('installation_id', { mode: 'number' }),
    /** The pull request the run belongs to, if any: `/fluksio cancel` and new pushes act on these. */
    prNumber: integer('pr_number'),
    trigger: text('trigger').$type<RunTrigger>(),
    /**
     * Made by a push or a pull request's event rather than asked for: a new push to the pull
     * request cancels these (and only these) while they are queued or running.
     */
    automatic: boolean('automatic').notNull().default(false),
    /** The pipeline's `metrics:` goals at the run's commit, so better/worse renders without the file. */
    metricGoals: jsonb('metric_goals').$type<MetricGoals>().notNull().default({}),
    /** The check run's name (`fluksio`, `fluksio (lr=0.1)`); null off GitHub. */
    checkName: text('check_name'),
    /**
     * The branch the run is of: a push's branch, a pull request's head branch; null when
     * unknown (a submitted run that named none, a local run). The run lists filter by it.
     */
    branch: text('branch'),
    /** A pull request's base branch, for the baseline (DESIGN §7); null for pushes. */
    baseRef: text('base_ref'),
    /**
     * Where the baseline may be, nearest first: as the submitter's repository knew it (a
     * first-parent walk from the run's commit), or, for a run the GitHub App made, as GitHub
     * answered the outbox's first lookup (a first-parent walk from the pull request's
     * merge-base, or from a push's commit), recorded once and never overwritten. Null while
     * unknown: a submitted run's baseline is then looked for at its own commit, an App-made
     * run's is fixed once the lookup is recorded.
     */
    baselineCommits: jsonb('baseline_commits').$type<string[]>(),
    /** The pull request's merge-base GitHub named with baselineCommits, so it is labelled so. */
    baselineMergeBase: text('baseline_merge_base'),
    /**
     * The outbox's failed lookups of an App-made run's baselineCommits since it finished;
     * after enough of them its baseline is fixed from its own commit (outbox-baseline.ts).
     */
    baselineLookupFailures: integer('baseline_lookup_failures').notNull().default(0),
    /**
     * The baseline fixed when the run finished (baselineFixed), so a run is always shown
     * against the run it was first compared with, never one made later; null for none.
     */
    baselineRunId: text('baseline_run_id'),
    /**
     * CPU- and GPU-seconds the run's Slurm jobs used, summed over its stages and attempts as
     * their finish events arrive (stage-usage.ts); null while no stage ran as a job.
     */
    cpuSeconds: doublePrecision('cpu_seconds'),
    gpuSeconds: doublePrecision('gpu_seconds'),
    /** Whether baselineRunId was fixed at the run's end (false: a run from before, or unfinished). */
    baselineFixed: boolean('baseline_fixed').notNull().default(false),
  },
  (table) => [
    index('runs_repository_pipeline_path_commit_idx').on(table.repository, table.pipelinePath, table.commit),
    // The claim reads queued runs oldest first; the sweeper and the gauges read by status.
    index('runs_status_created_at_id_idx').on(table.status, table.createdAt, table.id),
    index('runs_group_id_idx').on(table.groupId),
    // `/fluksio cancel` and a new push look up a pull request's active runs.
    index('runs_repository_pr_number_idx').on(table.repository, table.prNumber),
    // The run lists: a repository's runs newest first, a page at a time (keyset).
    index('runs_repository_created_at_id_idx').on(table.repository, table.createdAt.desc(), table.id.desc()),
  ],
);
export type Run = typeof runs.$inferSelect;
export type NewRun = typeof runs.$inferInsert;
