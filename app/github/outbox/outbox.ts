import { DelayedError, Queue, Worker, type Job, type JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { bumpDriftedChecks } from '../../../store/outbox/bump-drifted-checks.js';
import { bumpRenderVersion } from '../../../store/outbox/bump-render-version.js';
import type { Database } from '../../../store/db/database.js';
import { findOutboxVersions } from '../../../store/outbox/find-outbox-versions.js';
import { findRunStatus } from '../../../store/runs/find-run-status.js';
import { listUnsentOutboxTargets } from '../../../store/outbox/list-unsent-outbox-targets.js';
import { markOutboxSent } from '../../../store/outbox/mark-outbox-sent.js';
import type { OutboxTarget } from '../../../store/outbox/outbox-target.js';
import type { OutboxOctokit } from './outbox-octokit.js';
import { OutboxRateLimitError, rateLimitRetryAt } from './outbox-rate-limit-error.js';
import { OutboxRateLimitGate } from './outbox-rate-limit-gate.js';
import { keepJobScheduled } from '../../keep-job-scheduled.js';
import { permanentGitHubRefusal } from '../permanent-github-refusal.js';
import { syncCheckRun, type SyncLater } from './sync-check-run.js';
import { withTimeout } from './with-timeout.js';
import type { PageLinkSigner } from '../../pages/page-link-signer.js';
import type { SyncContext } from './sync-context.js';
import { syncGroupComment } from './sync-group-comment.js';
import { syncNotice } from './sync-notice.js';

const QUEUE = 'github-outbox';
const RECONCILER_ID = 'reconcile';
/** Targets of each kind the reconciler queues per round; the next round takes the rest. */
const RECONCILE_BATCH = 500;
/**
 * Attempts of one job before it is dropped. With the backoff capped at five minutes this
 * is about an hour; a target still unsent then is queued again by the reconciler, so an
 * outage of any length delays a check run but never loses it.
 */
const ATTEMPTS = 20;

/** How the outbox paces itself. */
export interface GitHubOutboxSettings {
  /**
   * The check runs' base name, for a sweep member whose run records none.
   * @defaultValue 'fluksio'
   */
  checkName: string;
  /** The control plane's public URL: check runs link to `<it>/api/v1/runs/<id>`. */
  apiBaseUrlForLinks: string;
  /**
   * Signs links to the run pages, for the check run's details and the sweep comment.
   * @defaultValue null (check runs link to the JSON API)
   */
  pageLinks: PageLinkSigner | null;
  /**
   * A running run's check run is refreshed at most this often (DESIGN §8); queued and
   * completed states go out at once.
   * @defaultValue 10_000
   */
  inProgressRefreshMs: number;
  /**
   * How often the reconciler queues targets whose latest render GitHub does not show.
   * @defaultValue 60_000
   */
  reconcileIntervalMs: number;
  /**
   * How long a run's state may differ from what its check run shows before the reconciler
   * takes it for a lost render bump (the state change committed, the bump never ran) and
   * sends it again; the normal bump follows the change at once.
   * @defaultValue 30_000
   */
  driftGraceMs: number;
  /**
   * The first retry's delay after a failure (5xx, a dropped connection); it doubles per
   * attempt up to `maxRetryDelayMs`, with ±20% jitter. Rate limits wait as GitHub says.
   * @defaultValue 1_000
   */
  retryDelayMs: number;
  /** @defaultValue 300_000 */
  maxRetryDelayMs: number;
  /**
   * How long a notify waits for Redis to take its job. Past it the notify returns (and
   * logs); the reconciler queues the change once Redis is back, so a caller such as the
   * runner's finish request never hangs on a Redis outage.
   * @defaultValue 2_000
   */
  enqueueTimeoutMs: number;
  /**
   * Targets this replica syncs at once (one target is never synced twice at once).
   * @defaultValue 8
   */
  concurrency: number;
}

export interface GitHubOutboxOptions {
  db: Database;
  /** Redis for the queue and the rate-limit gate. */
  redisUrl: string;
  /** Prefix of every Redis key, as the rest of the control plane's. */
  queuePrefix: string;
  /** An installation's client (e.g. `probot.auth(installationId)`). */
  github: (installationId: number) => Promise<OutboxOctokit>;
  settings: Partial<GitHubOutboxSettings> & Pick<GitHubOutboxSettings, 'apiBaseUrlForLinks'>;
  logger: Logger;
}

type OutboxJobData = OutboxTarget | { kind: 'reconcile' };
type OutboxJob = Job<OutboxJobData, void, OutboxJobData['kind']>;

const DEFAULT_SETTINGS = {
  checkName: 'fluksio',
  inProgressRefreshMs: 10_000,
  reconcileIntervalMs: 60_000,
  driftGraceMs: 30_000,
  retryDelayMs: 1_000,
  maxRetryDelayMs: 300_000,
  enqueueTimeoutMs: 2_000,
  concurrency: 8,
  pageLinks: null,
} satisfies Omit<GitHubOutboxSettings, 'apiBaseUrlForLinks'>;

/**
 * Every write to GitHub of check runs, notices and sweep comments (DESIGN §8). A change is
 * announced with `notifyRun`/`notifyNotice`/`notifyGroup`, which bump the target's render
 * version and queue one BullMQ job per target (its id collapses duplicates); the job
 * renders from the database when it runs, so what GitHub gets is the state at send time.
 * Retries back off on failures and wait out rate limits; a repeatable reconciler queues
 * whatever GitHub does not show yet, so a lost job or a Redis outage only delays.
 */
export class GitHubOutbox {
  private readonly settings: GitHubOutboxSettings;
  private readonly connection: { url: string; maxRetriesPerRequest: null };
  private readonly queue: Queue<OutboxJobData, void, OutboxJobData['kind']>;
  private readonly redis: Redis;
  private readonly gate: OutboxRateLimitGate;
  private worker: Worker<OutboxJobData, void, OutboxJobData['kind']> | null = null;
  private stopScheduling: (() => void) | null = null;

  constructor(private readonly options: GitHubOutboxOptions) {
    this.settings = { ...DEFAULT_SETTINGS, ...options.settings };
    for (const name of [
      'inProgressRefreshMs',
      'reconcileIntervalMs',
      'retryDelayMs',
      'maxRetryDelayMs',
      'enqueueTimeoutMs',
      'concurrency',
    ] as const) {
      if (!(this.settings[name] > 0)) throw new Error(`${name} must be greater than 0`);
    }
    this.connection = { url: options.redisUrl, maxRetriesPerRequest: null };
    this.queue = new Queue(QUEUE, { connection: this.connection, prefix: options.queuePrefix });
    this.queue.on('error', (error) =>
      options.logger.warn({ err: error }, 'GitHub outbox queue: Redis error'),
    );
    this.redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
    this.redis.on('error', (error: Error) =>
      options.logger.warn({ err: error }, 'GitHub outbox rate-limit gate: Redis error'),
    );
    this.gate = new OutboxRateLimitGate(this.redis, options.queuePrefix);
  }

  /** Starts this replica's worker and makes sure the reconciler is scheduled (again every interval). */
  async start(): Promise<void> {
    if (this.worker) return;
    const { logger } = this.options;
    const worker = new Worker<OutboxJobData, void, OutboxJobData['kind']>(
      QUEUE,
      (job, token) => this.process(job, token),
      {
        connection: this.connection,
        prefix: this.options.queuePrefix,
        concurrency: this.settings.concurrency,
        settings: { backoffStrategy: (attemptsMade: number) => this.retryDelay(attemptsMade) },
      },
    );
    this.worker = worker;
    worker.on('error', (error) => logger.warn({ err: error }, 'GitHub outbox worker: Redis error'));
    worker.on('failed', (job, error) => {
      const attempts = job?.attemptsMade ?? 0;
      if (attempts < ATTEMPTS)
        logger.warn({ err: error, target: job?.data, attempts }, 'GitHub update failed; retrying');
      else
        logger.error(
          { err: error, target: job?.data, attempts },
          'GitHub update failed; the reconciler retries it',
        );
    });
    worker.on('completed', (job) => {
      this.recheck(job.data).catch((error: unknown) =>
        logger.warn({ err: error, target: job.data }, 'could not re-check a GitHub update'),
      );
    });
    this.stopScheduling = await keepJobScheduled({
      queue: this.queue,
      schedulerId: RECONCILER_ID,
      everyMs: this.settings.reconcileIntervalMs,
      data: { kind: 'reconcile' },
      what: 'the GitHub outbox reconciler',
      logger,
    });
  }

  /** Stops the worker (letting syncs in progress finish), then disconnects from Redis. */
  async close(): Promise<void> {
    this.stopScheduling?.();
    await this.worker?.close();
    await this.queue.close();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /**
   * A run changed: its check run is brought up to date, and, unless the run is running, its
   * sweep's comment (if it has one). Never throws.
   */
  notifyRun(runId: string): Promise<void> {
    return this.notify({ kind: 'check', id: runId });
  }

  /** A notice was recorded or changed: its `action_required` check run is sent. Never throws. */
  notifyNotice(id: string): Promise<void> {
    return this.notify({ kind: 'notice', id });
  }

  /** A sweep was queued or one of its runs changed: its comment is sent. Never throws. */
  notifyGroup(groupId: string): Promise<void> {
    return this.notify({ kind: 'group', id: groupId });
  }

  private async notify(target: OutboxTarget): Promise<void> {
    try {
      const bumped = await bumpRenderVersion({ db: this.options.db, target });
      if (!bumped) return;
      // A sweep's comment shows its runs' states and final metrics: it is edited as a run
      // is queued or finishes, not at every refresh of a running one.
      if (bumped.groupId !== null && bumped.runStatus !== 'running')
        await this.notify({ kind: 'group', id: bumped.groupId });
      // Only a running run's refresh may wait for its slot; anything else goes out now.
      // A job that Redis takes after the timeout is still fine: its id collapses it with the reconciler's.
      await withTimeout(
        this.enqueue(target, { urgent: bumped.runStatus !== 'running' }),
        this.settings.enqueueTimeoutMs,
        `Redis did not take the job within ${this.settings.enqueueTimeoutMs} ms`,
      );
    } catch (error) {
      this.options.logger.error(
        { err: error, target },
        'could not queue a GitHub update; the reconciler sends it once its change is recorded',
      );
    }
  }

  private async enqueue(target: OutboxTarget, { urgent }: { urgent: boolean }): Promise<void> {
    const jobId = outboxJobId(target);
    await this.queue.add(target.kind, target, { jobId, ...JOB_OPTIONS });
    if (!urgent) return;
    // A job waiting for its in-progress refresh slot (or a retry) would hold a final state back.
    const job = await this.queue.getJob(jobId);
    if (job && (await job.getState()) === 'delayed') {
      // It may have left the delayed set meanwhile; then it is running or waiting, as wanted.
      await job.promote().catch(() => undefined);
    }
  }

  private async process(job: OutboxJob, token: string | undefined): Promise<void> {
    const target = job.data;
    if (target.kind === 'reconcile') return this.reconcile();
    let installationId: number | null = null;
    const context: SyncContext = {
      db: this.options.db,
      github: async (id) => {
        installationId = id;
        const until = await this.gate.blockedUntil(id);
        if (until !== null) throw new OutboxRateLimitError(id, until);
        return this.options.github(id);
      },
      uncertain: job.attemptsMade > 0 || job.attemptsStarted > 1,
      checkName: this.settings.checkName,
      apiBaseUrlForLinks: this.settings.apiBaseUrlForLinks,
      pageLinks: this.settings.pageLinks,
      inProgressRefreshMs: this.settings.inProgressRefreshMs,
      logger: this.options.logger,
    };
    let later: SyncLater | null;
    let throttled = false;
    try {
      later = await syncTarget(context, target);
      throttled = later !== null;
    } catch (error) {
      const retryAt =
        error instanceof OutboxRateLimitError ? error.retryAt : rateLimitRetryAt(error, Date.now());
      const refusal = permanentGitHubRefusal(error);
      if (refusal) {
        // Asking again changes nothing (the App uninstalled, the repository gone): this
        // render is given up, loudly, rather than retried and reconciled for ever.
        const versions = await findOutboxVersions({ db: this.options.db, target });
        if (versions)
          await markOutboxSent({ db: this.options.db, target, renderedVersion: versions.renderVersion });
        this.options.logger.error(
          { err: error, target, status: refusal.status },
          'GitHub refuses this update for good; it is given up',
        );
        return;
      }
      if (retryAt === null || installationId === null) throw error;
      if (!(error instanceof OutboxRateLimitError)) {
        await this.gate.block(installationId, retryAt);
        this.options.logger.warn(
          { err: error, target, installationId, retryAt: new Date(retryAt).toISOString() },
          'GitHub rate limit: the installation waits',
        );
      }
      later = { refreshAt: retryAt };
    }
    if (later === null) return;
    // Waiting is no failure: the job keeps its attempts and its id, so notifies collapse into it.
    await job.moveToDelayed(later.refreshAt, token);
    // A run that finished while this job was active found no delayed job to promote:
    // its completion must not wait for the refresh slot.
    if (throttled && target.kind === 'check' && (await this.ranOut(target.id)))
      await job.promote().catch(() => undefined);
    throw new DelayedError();
  }

  /** Whether a run is no longer running (so its check run's next change is urgent). */
  private async ranOut(runId: string): Promise<boolean> {
    const status = await findRunStatus({ db: this.options.db, runId });
    return status !== null && status !== 'running';
  }

  /** Queues a target again when it changed after its job's last check, as the job finished. */
  private async recheck(data: OutboxJobData): Promise<void> {
    if (data.kind === 'reconcile') return;
    const versions = await findOutboxVersions({ db: this.options.db, target: data });
    if (versions && versions.sentVersion < versions.renderVersion)
      await this.enqueue(data, { urgent: false });
  }

  private async reconcile(): Promise<void> {
    const drifted = await bumpDriftedChecks({
      db: this.options.db,
      graceMs: this.settings.driftGraceMs,
      limit: RECONCILE_BATCH,
    });
    if (drifted.length > 0)
      this.options.logger.warn(
        { runIds: drifted.slice(0, 20), count: drifted.length },
        'check runs whose run changed state unrecorded: sending them again',
      );
    const targets = await listUnsentOutboxTargets({ db: this.options.db, limit: RECONCILE_BATCH });
    for (const target of targets) await this.enqueue(target, { urgent: false });
    if (targets.length > 0)
      this.options.logger.info({ targets: targets.length }, 'reconciler queued unsent GitHub updates');
  }

  private retryDelay(attemptsMade: number): number {
    const delay = Math.min(
      this.settings.retryDelayMs * 2 ** (attemptsMade - 1),
      this.settings.maxRetryDelayMs,
    );
    return Math.round(delay * (0.8 + Math.random() * 0.4));
  }
}

/**
 * Finished jobs are removed: a job id that stayed behind would swallow the next change
 * of its target. Retries use the worker's backoff strategy.
 */
const JOB_OPTIONS = {
  attempts: ATTEMPTS,
  backoff: { type: 'outbox' },
  removeOnComplete: true,
  removeOnFail: true,
} satisfies JobsOptions;

/** One job id per target, so its changes collapse into one job (BullMQ ids may not hold `:`). */
export function outboxJobId(target: OutboxTarget): string {
  return `${target.kind}-${encodeURIComponent(target.id)}`;
}

async function syncTarget(context: SyncContext, target: OutboxTarget): Promise<SyncLater | null> {
  switch (target.kind) {
    case 'check':
      return syncCheckRun(context, target.id);
    case 'notice':
      await syncNotice(context, target.id);
      return null;
    case 'group':
      await syncGroupComment(context, target.id);
      return null;
  }
}
