import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { logLines } from '../../schemas/tables/log-lines.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { removeKeys } from '../app/control-plane-harness.js';
import { waitFor } from '../app-github/github-app-fixture.js';
import { startGitHubDouble } from '../github/github-double.js';
import { sendWebhook } from '../github/send-webhook.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import {
  removeDir,
  startApp,
  startRunnerProcess,
  TEST_REDIS_URL,
  type AppProcess,
} from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startRoundRobinBalancer, type RoundRobinBalancer } from './round-robin-balancer.js';

const PIPELINE = `version: 1
on:
  push: { branches: [main] }
stages:
  train:
    cmd: python3 train.py
    deps: [train.py, seed.txt]
`;

const LINES = 300;

/** 300 numbered lines and 30 metric points over ~3 s: events keep flowing while a replica dies. */
const TRAIN = `import time
seed = open("seed.txt").read().strip()
for i in range(${LINES}):
    print(f"line {i} seed {seed}", flush=True)
    if i % 10 == 0:
        print(f"::metric name=loss::{1 / (i + 1)}", flush=True)
    time.sleep(0.01)
`;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

/**
 * Acceptance 2 of issue 12: two `fluksio app` processes on one PostgreSQL and one Redis,
 * a round-robin load balancer in front, a real runner and the GitHub double behind real
 * signed webhook deliveries. Deliveries, claims and event batches reach both processes;
 * one is killed with SIGKILL while runs are running; every run still finishes, every
 * event is stored exactly once and in order, and every check run ends completed.
 */
test('two control plane processes behind a load balancer, one killed with SIGKILL mid-run: every event stored once, every check run final', async () => {
  const repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'train.py': TRAIN, 'seed.txt': '0\n' } });
  const commits = [(await repo.git('rev-parse', 'HEAD')).trim()];
  for (let seed = 1; seed < 4; seed += 1) {
    await repo.write('seed.txt', `${seed}\n`);
    commits.push(await repo.commitAll(`seed ${seed}`));
  }
  const double = await startGitHubDouble({ https: true });
  const fullName = `acme/model-${randomBytes(3).toString('hex')}`;
  const doubleRepo = double.addRepository({ owner: 'acme', name: fullName.split('/')[1] as string });
  double.serveRepository(doubleRepo.fullName, repo.dir);
  for (const sha of commits) double.setFile(doubleRepo.fullName, sha, 'fluksio.yml', PIPELINE);
  double.setCommits(doubleRepo.fullName, [...commits].reverse(), { branch: 'main' });

  const { db } = database;
  const token = randomBytes(32).toString('hex');
  await createRunner({
    db,
    name: 'gpu-box',
    owner: 'acme',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  const prefix = `fluksio-test-${randomBytes(4).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'fluksio-replicas-'));
  const env = {
    APP_ID: String(double.credentials.appId),
    PRIVATE_KEY: double.credentials.privateKey,
    WEBHOOK_SECRET: double.credentials.webhookSecret,
    GITHUB_API_URL: double.url,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
  };
  const apps: AppProcess[] = [];
  let balancer: RoundRobinBalancer | undefined;
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    // One blob directory for both, as a shared filesystem would be.
    for (let replica = 0; replica < 2; replica += 1)
      apps.push(await startApp({ databaseUrl: database.url, prefix, dataDir, env }));
    const [survivor, victim] = apps as [AppProcess, AppProcess];
    balancer = await startRoundRobinBalancer([survivor.url, victim.url]);
    const lb = balancer;

    for (const sha of commits) {
      const answer = await sendWebhook(
        `${lb.url}/api/github/webhooks`,
        pushPayload({ repo: doubleRepo, ref: 'main', after: sha }),
        double.credentials.webhookSecret,
      );
      expect(answer.status, answer.body).toBe(200);
    }
    runner = await startRunnerProcess({
      url: lb.url,
      token,
      args: ['--concurrency', '2'],
      env: { GIT_SSL_CAINFO: double.caFile ?? '' },
    });
    const started = runner;

    // Both replicas take part before one dies: webhooks, claims and event batches.
    await waitFor(
      'webhooks, claims and events on both replicas, with a run running',
      async () => {
        const spread = [survivor, victim].every(({ url }) => {
          const served = lb.served(url);
          return served.webhook > 0 && served.claim > 0 && served.events > 0;
        });
        const running = await db.select().from(runs).where(eq(runs.status, 'running'));
        return spread && running.length > 0;
      },
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${started.output()}\n${victim.process.output()}`);
    });
    await victim.stop('SIGKILL');
    const servedByVictim = lb.served(victim.url);

    const finished = await waitFor(
      'every run to finish',
      async () => {
        const all = await db.select().from(runs);
        return all.length === commits.length && all.every((run) => run.finishedAt !== null) && all;
      },
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${started.output()}\n${survivor.process.output()}`);
    });
    expect(finished.map((run) => run.status)).toEqual(commits.map(() => 'succeeded'));
    expect(finished.map((run) => run.commit).sort()).toEqual([...commits].sort());

    for (const run of finished) await expectEventsOnce(database, run);

    // The outbox jobs the victim held come back to the survivor (stalled jobs, the reconciler).
    const checkRuns = await waitFor(
      'every check run completed',
      () => {
        const all = double
          .checkRuns(doubleRepo.fullName)
          .filter((checkRun) => finished.some((run) => run.id === checkRun.externalId));
        return (
          all.length === finished.length && all.every((checkRun) => checkRun.status === 'completed') && all
        );
      },
      150_000,
    );
    expect(checkRuns.map((checkRun) => checkRun.conclusion)).toEqual(finished.map(() => 'success'));
    expect(lb.served(victim.url)).toEqual(servedByVictim);
    expect(lb.served(survivor.url).events).toBeGreaterThan(0);
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await balancer?.close();
    for (const app of apps) await app.stop('SIGKILL');
    await double.close();
    await repo.cleanup();
    await removeDir(dataDir);
    const redis = new Redis(TEST_REDIS_URL);
    await removeKeys(redis, prefix);
    await redis.quit();
  }
  expect(double.violations).toEqual([]);
}, 420_000);

/** The run's last attempt stored each of its lines and points once, in the order printed. */
async function expectEventsOnce({ db }: TestDatabase, run: Run): Promise<void> {
  const rows = await db
    .select({ lines: logLines.lines })
    .from(logLines)
    .where(and(eq(logLines.runId, run.id), eq(logLines.attempt, run.attempt), eq(logLines.stage, 'train')))
    .orderBy(asc(logLines.seq));
  const printed = rows.flatMap((row) => row.lines).filter((line) => line.startsWith('line '));
  const seed = printed[0]?.split(' ').at(-1) ?? '?';
  expect(printed, `run ${run.id}`).toEqual(Array.from({ length: LINES }, (_, i) => `line ${i} seed ${seed}`));
  const points = await db
    .select({ step: metricPoints.step })
    .from(metricPoints)
    .where(and(inArray(metricPoints.runId, [run.id]), eq(metricPoints.name, 'loss')))
    .orderBy(asc(metricPoints.step));
  expect(points.map((point) => point.step)).toEqual(Array.from({ length: LINES / 10 }, (_, i) => i));
}

/**
 * `--role web` and `--role worker` as processes of their own: the web process stores and
 * enqueues the delivery and answers the runner; the worker, which serves no API, turns the
 * delivery into a run and sends its check run.
 */
test('fluksio app --role web and --role worker: the web process takes the webhook and the runner, the worker makes the run and its check run', async () => {
  const repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'train.py': TRAIN, 'seed.txt': '0\n' } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const double = await startGitHubDouble({ https: true });
  const doubleRepo = double.addRepository({ owner: 'acme', name: `model-${randomBytes(3).toString('hex')}` });
  double.serveRepository(doubleRepo.fullName, repo.dir);
  double.setFile(doubleRepo.fullName, commit, 'fluksio.yml', PIPELINE);
  double.setCommits(doubleRepo.fullName, [commit], { branch: 'main' });
  const { db } = database;
  const token = randomBytes(32).toString('hex');
  await createRunner({
    db,
    name: `box-${randomBytes(3).toString('hex')}`,
    owner: 'acme',
    labels: [],
    repositories: [doubleRepo.fullName],
    tokenHash: hashToken(token),
  });
  const prefix = `fluksio-test-${randomBytes(4).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'fluksio-roles-'));
  const env = {
    APP_ID: String(double.credentials.appId),
    PRIVATE_KEY: double.credentials.privateKey,
    WEBHOOK_SECRET: double.credentials.webhookSecret,
    GITHUB_API_URL: double.url,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
  };
  const apps: AppProcess[] = [];
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    const debug = { ...env, LOG_LEVEL: 'debug' };
    const web = await startApp({
      databaseUrl: database.url,
      prefix,
      dataDir,
      env: debug,
      args: ['--role', 'web'],
    });
    apps.push(web);
    const worker = await startApp({
      databaseUrl: database.url,
      prefix,
      dataDir,
      env: debug,
      args: ['--role', 'worker'],
    });
    apps.push(worker);
    const claimOnWorker = await fetch(`${worker.url}/api/v1/runner/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"waitSeconds":0}',
    });
    expect(claimOnWorker.status).toBe(404);
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);

    const answer = await sendWebhook(
      `${web.url}/api/github/webhooks`,
      pushPayload({ repo: doubleRepo, ref: 'main', after: commit }),
      double.credentials.webhookSecret,
    );
    expect(answer.status, answer.body).toBe(200);
    runner = await startRunnerProcess({ url: web.url, token, env: { GIT_SSL_CAINFO: double.caFile ?? '' } });
    const started = runner;
    const run = await waitFor(
      'the run to succeed',
      async () => {
        const [found] = await db.select().from(runs).where(eq(runs.commit, commit));
        return found?.status === 'succeeded' && found;
      },
      60_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${started.output()}\n${worker.process.output()}`);
    });
    await expectEventsOnce(database, run);
    const checkRun = await waitFor('the completed check run', () => {
      const found = double
        .checkRuns(doubleRepo.fullName)
        .find((candidate) => candidate.externalId === run.id);
      return found?.status === 'completed' && found;
    });
    expect(checkRun.conclusion).toBe('success');
    expect(worker.process.output()).toContain('delivery processed');
    expect(web.process.output()).not.toContain('delivery processed');
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    for (const app of apps) await app.stop('SIGKILL');
    await double.close();
    await repo.cleanup();
    await removeDir(dataDir);
    const redis = new Redis(TEST_REDIS_URL);
    await removeKeys(redis, prefix);
    await redis.quit();
  }
  expect(double.violations).toEqual([]);
}, 180_000);
