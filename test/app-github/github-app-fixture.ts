import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { asc, eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { readControlPlaneSettings, type ControlPlaneSettings } from '../../app/control-plane-settings.js';
import { hashToken } from '../../app/http/hash-token.js';
import { startControlPlane, type ControlPlane } from '../../app/start-control-plane.js';
import { deliveries, type DeliveryRow } from '../../schemas/tables/deliveries.js';
import { githubChecks, type GitHubCheckRow } from '../../schemas/tables/github-checks.js';
import { githubNotices, type GitHubNoticeRow } from '../../schemas/tables/github-notices.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { createRunner } from '../../store/runners/create-runner.js';
import type { Database } from '../../store/db/database.js';
import { removeKeys, resetTables, TEST_REDIS_URL, testPrefix } from '../app/control-plane-harness.js';
import { startGitHubDouble, type DoubleRepository, type GitHubDouble } from '../github/github-double.js';
import { sendWebhook, type SendWebhookOptions, type WebhookResponse } from '../github/send-webhook.js';
import { issueCommentPayload, type WebhookDelivery } from '../github/webhook-fixtures.js';
import type { Actor } from '../github/github-shapes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';

/** A pipeline with params, labels and both automatic triggers. */
export const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.01, min: 0 }
  seed: { type: int, default: 0 }
runs-on: [gpu]
on:
  push: { branches: [main] }
  pull_request: {}
retries: 1
timeout: 2h
metrics:
  accuracy: { goal: max }
stages:
  train:
    cmd: python train.py --lr \${lr} --seed \${seed}
    deps: [train.py]
    params: [lr, seed]
    metrics: [metrics.json]
`;

/** Commits of the test repository, 40 hex digits each. */
export const SHA = {
  main: '1'.repeat(40),
  head: 'a1b2c3d4'.repeat(5),
  newHead: 'b2c3d4e5'.repeat(5),
  forkHead: 'c3d4e5f6'.repeat(5),
  broken: 'd4e5f6a7'.repeat(5),
} as const;

export const PR = 7;

/** Someone with write permission; comments come from them unless a test says otherwise. */
export const MAINTAINER: Actor = { login: 'maintainer' };

let database: TestDatabase | undefined;

/** One migrated database per test file (from beforeAll). */
export async function openGitHubAppDatabase(): Promise<void> {
  database = await createTestDatabase();
}

export async function closeGitHubAppDatabase(): Promise<void> {
  await database?.close();
  database = undefined;
}

/** A control plane with the GitHub App against a GitHub double, and what tests do with them. */
export interface GitHubAppWorld {
  double: GitHubDouble;
  repo: DoubleRepository;
  db: Database;
  plane: ControlPlane;
  settings: ControlPlaneSettings;
  webhookUrl: string;
  /** Every log line of the control plane so far. */
  logs(): string;
  /** Sends a signed delivery over HTTP. */
  send(delivery: WebhookDelivery, options?: SendWebhookOptions): Promise<WebhookResponse>;
  /** Sends a delivery and waits until the worker processed it (or gave up); the delivery's row. */
  deliver(delivery: WebhookDelivery): Promise<DeliveryRow>;
  /** Waits until a stored delivery was processed or given up on. */
  settled(deliveryId: string): Promise<DeliveryRow>;
  /** A `/fluksio …` comment on the pull request, by the maintainer unless `user` is given. */
  comment(
    body: string,
    options?: { user?: Actor; action?: 'created' | 'edited' },
  ): WebhookDelivery<'issue_comment'>;
  /** Points the pull request's head at `sha` (another repository's id makes a fork). */
  setHead(sha: string, options?: { forkId?: number | null; user?: Actor }): void;
  runs(): Promise<Run[]>;
  checks(): Promise<GitHubCheckRow[]>;
  notices(): Promise<GitHubNoticeRow[]>;
  /** The bodies of the replies on the pull request. */
  replies(): string[];
  /** The reactions on a comment, in order. */
  reactions(commentId: number): string[];
  close(): Promise<void>;
}

/**
 * A world for one test: a GitHub double with `acme/model-<random>` whose main, head and
 * fork commits carry PIPELINE, pull request #7 at SHA.head, the maintainer with write
 * permission; the control plane (`startControlPlane`, the real composition) on this file's
 * database with a Redis prefix of its own, removed at close.
 */
export async function openGitHubAppWorld({
  env = {},
  serve,
}: {
  /** Settings on top of the world's. */
  env?: Record<string, string>;
  /**
   * A git repository the double serves as the test repository over HTTPS, with installation
   * tokens (its `clone_url`, for a real runner; its CA is `double.caFile`).
   */
  serve?: string;
} = {}): Promise<GitHubAppWorld> {
  if (!database) throw new Error('call openGitHubAppDatabase() in beforeAll first');
  const { db } = database;
  await resetTables(db);
  await db.execute(sql`truncate deliveries, installations, github_checks, github_notices, group_comments`);
  const double = await startGitHubDouble({ https: serve !== undefined });
  const repo = double.addRepository({ owner: 'acme', name: `model-${randomBytes(3).toString('hex')}` });
  if (serve !== undefined) double.serveRepository(repo.fullName, serve);
  for (const sha of [SHA.main, SHA.head, SHA.newHead, SHA.forkHead]) {
    double.setFile(repo.fullName, sha, 'fluksio.yml', PIPELINE);
  }
  double.setPermission(repo.fullName, MAINTAINER.login, 'write');
  let head = { sha: SHA.head, ref: 'feature' } as { sha: string; ref: string; repoId?: number | null };
  let author: Actor | undefined;
  const setPullRequest = () =>
    double.setPullRequest(repo.fullName, {
      number: PR,
      head,
      base: { sha: SHA.main, ref: 'main' },
      ...(author && { user: author }),
    });
  setPullRequest();

  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'fluksio-github-'));
  const prefix = testPrefix();
  const settings = readControlPlaneSettings({
    REDIS_URL: TEST_REDIS_URL,
    DATABASE_URL: database.url,
    FLUKSIO_QUEUE_PREFIX: prefix,
    FLUKSIO_DATA_DIR: dataDir,
    FLUKSIO_SWEEP_INTERVAL: '1s',
    HOST: '127.0.0.1',
    PORT: '0',
    APP_ID: String(double.credentials.appId),
    PRIVATE_KEY: double.credentials.privateKey,
    WEBHOOK_SECRET: double.credentials.webhookSecret,
    GITHUB_API_URL: double.url,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
    ...env,
  });
  const plane = await startControlPlane({ settings, logger });
  const webhookUrl = `${plane.url}/api/github/webhooks`;

  const settled = async (deliveryId: string): Promise<DeliveryRow> =>
    waitFor(`delivery ${deliveryId} to be processed`, async () => {
      const [row] = await db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
      return row && (row.processedAt !== null || row.failedAt !== null) ? row : undefined;
    });

  const world: GitHubAppWorld = {
    double,
    repo,
    db,
    plane,
    settings,
    webhookUrl,
    logs: () => text,
    send: (delivery, options) => sendWebhook(webhookUrl, delivery, double.credentials.webhookSecret, options),
    async deliver(delivery) {
      const response = await world.send(delivery);
      if (response.status !== 200)
        throw new Error(`the webhook answered ${response.status}: ${response.body}`);
      return settled(delivery.id);
    },
    settled,
    comment: (body, options = {}) =>
      issueCommentPayload({
        repo,
        number: PR,
        body,
        user: options.user ?? MAINTAINER,
        action: options.action,
      }),
    setHead(sha, options = {}) {
      head = { sha, ref: 'feature', ...(options.forkId !== undefined && { repoId: options.forkId }) };
      author = options.user;
      setPullRequest();
    },
    runs: () => db.select().from(runs).orderBy(asc(runs.createdAt), asc(runs.id)),
    checks: () => db.select().from(githubChecks),
    notices: () => db.select().from(githubNotices),
    replies: () => double.comments(repo.fullName, PR).map((comment) => comment.body),
    reactions: (commentId) => double.reactions(repo.fullName, commentId).map((reaction) => reaction.content),
    async close() {
      await plane.close();
      await double.close();
      const redis = new Redis(TEST_REDIS_URL);
      await removeKeys(redis, prefix);
      await redis.quit();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

export { waitFor };

/** Registers a runner named gpu-box for any of acme's repositories, with `labels`; its token. */
export async function registerAcmeRunner(world: GitHubAppWorld, labels: string[]): Promise<string> {
  const token = randomBytes(32).toString('hex');
  await createRunner({
    db: world.db,
    name: 'gpu-box',
    owner: 'acme',
    labels,
    repositories: [],
    tokenHash: hashToken(token),
  });
  return token;
}

/** The check run the double holds for `runId`, once it is completed. */
export function completedCheckRun(world: GitHubAppWorld, runId: string) {
  return waitFor(`the completed check run of ${runId}`, () => {
    const found = world.double
      .checkRuns(world.repo.fullName)
      .find((candidate) => candidate.externalId === runId);
    return found?.status === 'completed' && found;
  });
}
