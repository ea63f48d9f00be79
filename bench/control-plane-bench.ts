import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { startControlPlane } from '../app/start-control-plane.js';
import { Claim } from '../schemas/protocol/claim.js';
import { createApiToken } from '../store/tokens/create-api-token.js';
import { createRunner } from '../store/runners/create-runner.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { median, ms, percentile } from './measure.js';
import { openScratchEnvironment, REDIS_URL } from './scratch-environment.js';
import { pino } from 'pino';

const root = fileURLToPath(new URL('..', import.meta.url));
const COMMIT = 'b'.repeat(40);

/**
 * The control plane under load, in one run: claim latency with an idle runner waiting
 * next to raw BullMQ add → pickup, a burst of 1,000 no-op runs across 20 simulated runner
 * clients (runs/s, lost, claimed twice), and an idle runner process's memory.
 */
export async function benchControlPlane(): Promise<void> {
  const scratch = await openScratchEnvironment('plane');
  const { databaseUrl, prefix } = scratch;
  const settings = readControlPlaneSettings({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    FLUKSIO_QUEUE_PREFIX: prefix,
    FLUKSIO_DATA_DIR: scratch.dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const plane = await startControlPlane({ settings, logger: pino({ level: 'warn' }) });
  const database = await openControlPlaneDatabase(settings, pino({ level: 'warn' }));
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const submitToken = `fxt_${randomBytes(32).toString('base64url')}`;
    await createApiToken({
      db: database.db,
      name: 'bench',
      repositories: ['bench/model'],
      scope: 'submit',
      tokenHash: hashToken(submitToken),
    });
    const runnerTokens: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const token = `fxr_${randomBytes(32).toString('base64url')}`;
      await createRunner({
        db: database.db,
        name: `sim-${i}`,
        owner: 'bench',
        repositories: [],
        labels: ['cpu'],
        tokenHash: hashToken(token),
      });
      runnerTokens.push(token);
    }
    const post = async (path: string, token: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${plane.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 400) throw new Error(`${path} answered ${response.status}: ${text}`);
      return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null };
    };
    const submit = (key: string) =>
      post(
        '/api/v1/runs',
        submitToken,
        { repository: 'bench/model', commit: COMMIT, labels: ['cpu'] },
        { 'idempotency-key': key },
      );
    const claim = async (token: string, waitSeconds: number): Promise<Claim | null> => {
      const { status, json } = await post('/api/v1/runner/claim', token, { waitSeconds });
      return status === 204 ? null : Claim.parse(json);
    };
    const finish = (token: string, claimed: Claim) =>
      post(`/api/v1/runs/${claimed.run.id}/finish`, token, {
        lease: claimed.lease,
        status: 'succeeded',
        reason: null,
        metrics: {},
      });

    // Claim latency: one runner parked in a long-poll, then a run is queued.
    const claimLatencies: number[] = [];
    const queuedToClaimed: number[] = [];
    const idleRunner = runnerTokens[0] as string;
    const timing = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    for (let i = 0; i < 150; i += 1) {
      const waiting = claim(idleRunner, 30);
      await new Promise((resolve) => setTimeout(resolve, 15));
      const started = performance.now();
      await submit(`latency-${i}`);
      const claimed = await waiting;
      const now = Date.now();
      claimLatencies.push(performance.now() - started);
      if (!claimed) throw new Error('the waiting runner got no run');
      const [row] = await timing<
        { queued: Date }[]
      >`select queued_at as queued from runs where id = ${claimed.run.id}`;
      if (row) queuedToClaimed.push(now - row.queued.getTime());
      await finish(idleRunner, claimed);
    }
    await timing.end();

    // The reference: BullMQ's own add → pickup with an idle worker, same Redis, same run.
    const queueName = `${prefix}-reference`;
    const connection = { host: '127.0.0.1', port: Number(new URL(REDIS_URL).port || 6379) };
    const queue = new Queue(queueName, { connection, prefix });
    const pickups: number[] = [];
    let onPickup: (() => void) | null = null;
    const worker = new Worker(
      queueName,
      async (job) => {
        pickups.push(performance.now() - (job.data as { at: number }).at);
        onPickup?.();
      },
      { connection, prefix },
    );
    await worker.waitUntilReady();
    for (let i = 0; i < 150; i += 1) {
      const picked = new Promise<void>((resolve) => (onPickup = resolve));
      await new Promise((resolve) => setTimeout(resolve, 15));
      await queue.add('ping', { at: performance.now() });
      await picked;
    }
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();

    // A burst: 1,000 runs queued at once, 20 runner clients draining them.
    const burst = 1000;
    for (let i = 0; i < burst; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, burst - i) }, (_, j) => submit(`burst-${i + j}`)));
    }
    const claims = new Map<string, number>();
    const drainStarted = performance.now();
    await Promise.all(
      runnerTokens.map(async (token) => {
        for (;;) {
          const claimed = await claim(token, 0);
          if (!claimed) return;
          claims.set(claimed.run.id, (claims.get(claimed.run.id) ?? 0) + 1);
          await finish(token, claimed);
        }
      }),
    );
    const drainMs = performance.now() - drainStarted;
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const [counts] = await sql<{ succeeded: number; other: number }[]>`
      select count(*) filter (where status = 'succeeded')::int as succeeded,
             count(*) filter (where status <> 'succeeded')::int as other
      from runs where trigger_key like '%burst-%'`;
    await sql.end();
    const twice = [...claims.values()].filter((n) => n > 1).length;

    // An idle runner process: what it costs to leave one running.
    const workDir = await mkdtemp(join(tmpdir(), 'fluksio-bench-runner-'));
    const runner = spawn(
      process.execPath,
      [join(root, 'bin', 'fluksio.js'), 'runner', '--work-dir', workDir],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          FLUKSIO_URL: plane.url,
          FLUKSIO_RUNNER_TOKEN: runnerTokens[1],
        },
        stdio: 'ignore',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const status = await readFile(`/proc/${runner.pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    runner.kill('SIGTERM');
    await new Promise((resolve) => runner.once('exit', resolve));
    await rm(workDir, { recursive: true, force: true });

    const claimP50 = median(claimLatencies);
    const bullP50 = median(pickups);
    console.log('\n## Dispatch: a queued run reaching a runner parked in a long-poll (150 samples each)');
    console.log(
      `raw BullMQ add → idle worker pickup   p50 ${ms(bullP50)}   p99 ${ms(percentile(pickups, 99))}   (reference)`,
    );
    console.log(
      `fluksio submit → waiting claim        p50 ${ms(claimP50)}   p99 ${ms(percentile(claimLatencies, 99))}   ${(claimP50 / bullP50).toFixed(2)}× BullMQ p50 (target ≤ 3×)`,
    );
    console.log(
      `fluksio queued (row written) → claim   p50 ${ms(median(queuedToClaimed))}   p99 ${ms(percentile(queuedToClaimed, 99))}   ${(median(queuedToClaimed) / bullP50).toFixed(2)}× BullMQ p50`,
    );
    console.log(
      '  (submit → claim includes the submit request: HTTP, token check, insert, waiting reason, report)',
    );
    console.log(`\n## Burst: ${burst} no-op runs drained by 20 runner clients (claim + finish each)`);
    console.log(
      `runs/s ${(burst / (drainMs / 1000)).toFixed(0)}   drained in ${ms(drainMs)}   succeeded ${counts?.succeeded}   lost ${burst - (counts?.succeeded ?? 0)}   claimed twice ${twice}`,
    );
    console.log(`\n## Idle runner process\nRSS ${(rssKb / 1024).toFixed(1)} MiB after 4 s parked in a claim`);
  } finally {
    await redis.quit();
    await database.close();
    await plane.close();
    await scratch.close();
  }
}
