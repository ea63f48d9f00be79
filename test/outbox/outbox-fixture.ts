import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { ProbotOctokit } from 'probot';
import { monotonicFactory } from 'ulid';
import { GitHubOutbox, type GitHubOutboxSettings } from '../../app/github/outbox/outbox.js';
import type { Annotation } from '../../schemas/annotation.js';
import { annotations } from '../../schemas/tables/annotations.js';
import { githubChecks, type GitHubCheckRow } from '../../schemas/tables/github-checks.js';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import { createCheckedRun } from '../../store/runs/create-checked-run.js';
import type { Database } from '../../store/db/database.js';
import { removeKeys, TEST_REDIS_URL, testPrefix } from '../app/control-plane-harness.js';
import { startGitHubDouble, type DoubleCheckRun, type GitHubDouble } from '../github/github-double.js';
import { probotForDouble } from '../github/probot-for-double.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

const nextUlid = monotonicFactory();

/** Settings fast enough for tests: refreshes 400 ms apart, retries after 50 ms. */
export const FAST_SETTINGS = {
  apiBaseUrlForLinks: 'https://fluksio.example.com',
  inProgressRefreshMs: 400,
  retryDelayMs: 50,
  maxRetryDelayMs: 200,
  reconcileIntervalMs: 60_000,
} satisfies Partial<GitHubOutboxSettings>;

export interface SentRequest {
  at: number;
  method: string;
  url: string;
  installationId: number;
}

/** A GitHub double with one repository, a database, and outboxes over a Redis prefix of their own. */
export interface OutboxWorld {
  double: GitHubDouble;
  db: Database;
  /** `owner/name` of the double's repository. */
  repository: string;
  installationId: number;
  prefix: string;
  redis: Redis;
  /** The installation client the outbox uses; tests may replace it. */
  github: (installationId: number) => Promise<ProbotOctokit>;
  /** Every request the outbox's clients sent, with when (`Date.now()`) it left. */
  sent: SentRequest[];
  /** An outbox over this world (started unless `start: false`, logging to `logger`), closed with the world. */
  openOutbox(options?: {
    settings?: Partial<GitHubOutboxSettings>;
    start?: boolean;
    logger?: Logger;
  }): Promise<GitHubOutbox>;
  /** A queued run with its check row, as the app core creates it. */
  queueRun(overrides?: Partial<NewRun>): Promise<Run>;
  updateRun(runId: string, changes: Partial<NewRun>): Promise<void>;
  addAnnotations(runId: string, notes: Annotation[]): Promise<void>;
  checkRow(runId: string): Promise<GitHubCheckRow>;
  checkRunsOf(runId: string): DoubleCheckRun[];
  close(): Promise<void>;
}

let database: TestDatabase | undefined;

/** One migrated database per test file (call from beforeAll; closed by closeOutboxDatabase). */
export async function openOutboxDatabase(): Promise<void> {
  database = await createTestDatabase();
}

export async function closeOutboxDatabase(): Promise<void> {
  await database?.close();
  database = undefined;
}

export async function openOutboxWorld(): Promise<OutboxWorld> {
  if (!database) throw new Error('call openOutboxDatabase() in beforeAll first');
  const { db } = database;
  const double = await startGitHubDouble();
  const repo = double.addRepository({ owner: 'acme', name: `model-${randomBytes(3).toString('hex')}` });
  const probot = probotForDouble(double);
  const sent: SentRequest[] = [];
  const github = async (installationId: number): Promise<ProbotOctokit> => {
    const octokit = await probot.auth(installationId);
    octokit.hook.before('request', (options) => {
      sent.push({ at: Date.now(), method: options.method, url: options.url, installationId });
    });
    return octokit;
  };
  const prefix = testPrefix();
  const redis = new Redis(TEST_REDIS_URL);
  const outboxes: GitHubOutbox[] = [];
  const logger = pino({ level: process.env.FLUKSIO_TEST_LOG ?? 'silent' });

  const world: OutboxWorld = {
    double,
    db,
    repository: repo.fullName,
    installationId: repo.installationId,
    prefix,
    redis,
    github,
    sent,
    async openOutbox({ settings = {}, start = true, logger: log = logger } = {}) {
      const outbox = new GitHubOutbox({
        db,
        redisUrl: TEST_REDIS_URL,
        queuePrefix: prefix,
        github: (id) => world.github(id),
        settings: { ...FAST_SETTINGS, ...settings },
        logger: log,
      });
      outboxes.push(outbox);
      if (start) await outbox.start();
      return outbox;
    },
    async queueRun(overrides = {}) {
      const id = nextUlid();
      const { run } = await createCheckedRun({
        db,
        run: {
          id,
          repository: repo.fullName,
          pipelinePath: 'fluksio.yml',
          commit: 'a'.repeat(40),
          params: { lr: 0.1 },
          paramsDigest: 'params-lr-0.1',
          status: 'queued',
          statusReason: 'Waiting for a runner labelled gpu',
          installationId: repo.installationId,
          trigger: 'push',
          checkName: 'fluksio',
          triggerKey: `test:${id}`,
          ...overrides,
        } as NewRun & { triggerKey: string; commit: string },
        check: { installationId: repo.installationId, name: overrides.checkName ?? 'fluksio' },
      });
      return run;
    },
    async updateRun(runId, changes) {
      await db.update(runs).set(changes).where(eq(runs.id, runId));
    },
    async addAnnotations(runId, notes) {
      if (notes.length > 0) await db.insert(annotations).values(notes.map((note) => ({ runId, ...note })));
    },
    async checkRow(runId) {
      const [row] = await db.select().from(githubChecks).where(eq(githubChecks.runId, runId));
      if (!row) throw new Error(`run ${runId} has no check row`);
      return row;
    },
    checkRunsOf(runId) {
      return double.checkRuns(repo.fullName).filter((checkRun) => checkRun.externalId === runId);
    },
    async close() {
      for (const outbox of outboxes) await outbox.close();
      await removeKeys(redis, prefix);
      await redis.quit();
      await double.close();
    },
  };
  return world;
}

export { waitFor } from '../helpers/wait-for.js';

/** A run's state when it finished now, as the finish route writes it. */
export function finished(status: Run['status'], extra: Partial<NewRun> = {}): Partial<NewRun> {
  return { status, finishedAt: new Date(), durationMs: 1234, ...extra };
}
