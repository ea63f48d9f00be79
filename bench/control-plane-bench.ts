import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { startControlPlane } from '../app/start-control-plane.js';
import { ControlPlaneClient } from '../client/control-plane-client.js';
import type { Claim } from '../schemas/protocol/claim.js';
import { createApiToken } from '../store/tokens/create-api-token.js';
import { createRunner } from '../store/runners/create-runner.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { startRoundRobinBalancer } from '../test/acceptance/round-robin-balancer.js';
import { measureDispatchFloor } from './dispatch-floor.js';
import { drainBurst, type BurstResult } from './drain-burst.js';
import { openCommitReference } from './durable-commit.js';
import { median, ms, percentile } from './measure.js';
import { openScratchEnvironment, REDIS_URL } from './scratch-environment.js';
import { startAppReplicas } from './start-app-replicas.js';
import {
  epochNow,
  measureSubmitToClaim,
  runnerProcess,
  type ClaimingRunner,
  type SubmitToClaim,
} from './submit-to-claim.js';
import { pino } from 'pino';

const root = fileURLToPath(new URL('..', import.meta.url));
const COMMIT = 'b'.repeat(40);
/**
 * Submits each dispatch measurement takes and leaves out first, fluksio's and the floor's
 * alike: enough for every one of the app's ten pooled connections to have run the submit's
 * INSERT past PostgreSQL's five custom plans, and for V8 to have optimized the path.
 */
const WARMUP = 100;

/**
 * The control plane under load, in one run: submit → claim latency with an idle runner
 * waiting, next to one durable PostgreSQL commit timed between its samples and to raw
 * BullMQ add → pickup; a burst of 1,000 no-op runs across 20 simulated runner clients
 * (runs/s, lost, claimed twice) in this process, then through a round-robin balancer to one
 * and to two `fluksio app` processes; and an idle runner process's memory.
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
    // fluksio's own client, as `fluksio submit` and `fluksio runner` talk to the control plane.
    const submitter = (url: string) => new ControlPlaneClient({ url, token: submitToken, retries: 0 });
    const submitters = new Map<string, ControlPlaneClient>();
    const submit = (url: string, key: string) => {
      const client = submitters.get(url) ?? submitter(url);
      submitters.set(url, client);
      return client.submitRun({ repository: 'bench/model', commit: COMMIT, labels: ['cpu'] }, key);
    };

    // Claim latency: one runner parked in a long-poll, then a run is queued. A durable
    // commit is timed before each sample, so the reference shares the samples' load. First
    // with the runner client in this process, beside the control plane; then as deployed:
    // `fluksio app` in its own process, the runner in another, the submitter here.
    const reference = await openCommitReference(databaseUrl);
    const idleRunner = runnerTokens[0] as string;
    const timing = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const latencyOptions = { reference, timing, samples: 150, warmup: WARMUP };
    const inProcessClient = new ControlPlaneClient({ url: plane.url, token: idleRunner, retries: 0 });
    const inProcessRunner: ClaimingRunner = {
      async claim() {
        const claimed = await inProcessClient.claim(30, false);
        const at = epochNow();
        const finish = async (done: Claim): Promise<void> => {
          const lease = { runId: done.run.id, lease: done.lease };
          await inProcessClient.finish(lease, { status: 'succeeded', reason: null, metrics: {} });
        };
        return {
          at,
          runId: claimed?.run.id ?? null,
          finished: claimed ? finish(claimed) : Promise.resolve(),
        };
      },
    };
    const together = await measureSubmitToClaim({
      ...latencyOptions,
      url: plane.url,
      runner: inProcessRunner,
      submit: (key) => submit(plane.url, key),
    });
    const deployedPlane = await startAppReplicas(1, {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      FLUKSIO_QUEUE_PREFIX: prefix,
    });
    const deployedUrl = deployedPlane.urls[0] as string;
    const runnerClient = runnerProcess(deployedUrl, idleRunner);
    let deployed: SubmitToClaim;
    try {
      deployed = await measureSubmitToClaim({
        ...latencyOptions,
        url: deployedUrl,
        runner: runnerClient,
        submit: (key) => submit(deployedUrl, key),
      });
    } finally {
      await runnerClient.close();
      await deployedPlane.close();
    }
    // The same three processes and sampling in trivial code: what the machine itself costs.
    const floor = await measureDispatchFloor(reference, latencyOptions.samples, WARMUP);
    const synchronousCommit = reference.synchronousCommit;
    await reference.close();
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

    // A burst: 1,000 runs queued at once, 20 runner clients draining them — in this
    // process, then through a balancer to one `fluksio app` process and to two.
    const burst = 1000;
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const countSucceeded = async (keyPrefix: string): Promise<number> => {
      const [row] = await sql<{ succeeded: number }[]>`
        select count(*)::int as succeeded from runs
        where status = 'succeeded' and trigger_key like ${`%:${keyPrefix}%`}`;
      return row?.succeeded ?? 0;
    };
    const burstOptions = { submitToken, runnerTokens, burst, countSucceeded };
    const inProcess = await drainBurst({ ...burstOptions, url: plane.url, keyPrefix: 'burst-' });
    const behindBalancer: { processes: number; result: BurstResult; spread: string }[] = [];
    for (const processes of [1, 2]) {
      const replicas = await startAppReplicas(processes, {
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        FLUKSIO_QUEUE_PREFIX: prefix,
      });
      const balancer = await startRoundRobinBalancer(replicas.urls);
      try {
        const result = await drainBurst({ ...burstOptions, url: balancer.url, keyPrefix: `lb${processes}-` });
        const spread = replicas.urls.map((url) => balancer.served(url).claim).join(' + ');
        behindBalancer.push({ processes, result, spread });
      } finally {
        await balancer.close();
        await replicas.close();
      }
    }
    await sql.end();

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

    const commits = [...together.commits, ...deployed.commits, ...floor.commits];
    const commitP50 = median(commits);
    const bullP50 = median(pickups);
    console.log(
      `\n## Dispatch: a queued run reaching a runner parked in a long-poll (150 samples each, after ${WARMUP} left out as every process's warm-up)`,
    );
    console.log(
      `one durable PostgreSQL commit          p50 ${ms(commitP50)}   p95 ${ms(percentile(commits, 95))}   (reference; synchronous_commit ${synchronousCommit})`,
    );
    console.log(
      `raw BullMQ add → idle worker pickup   p50 ${ms(bullP50)}   p95 ${ms(percentile(pickups, 95))}   (${(bullP50 / commitP50).toFixed(2)}× a commit)`,
    );
    const latencyLines = (label: string, sample: SubmitToClaim): void => {
      const p50 = median(sample.latencies);
      const ownCommit = median(sample.commits);
      const queued = median(sample.queuedToClaimed);
      console.log(
        `fluksio submit → waiting claim, ${label}   p50 ${ms(p50)}   p95 ${ms(percentile(sample.latencies, 95))}   ` +
          `${(p50 / ownCommit).toFixed(2)}× a commit at p50 (target ≤ 3×: ${p50 / ownCommit <= 3 ? 'met' : 'missed'}), ${(p50 / bullP50).toFixed(1)}× BullMQ`,
      );
      console.log(
        `  of which queued (row written) → claim   p50 ${ms(queued)}   p95 ${ms(percentile(sample.queuedToClaimed, 95))}   ${(queued / ownCommit).toFixed(2)}× a commit`,
      );
    };
    latencyLines('as deployed (fluksio app, runner and submitter: three processes)', deployed);
    latencyLines('runner client and submitter in the control plane process', together);
    const floorP50 = median(floor.latencies);
    console.log(
      `the same three processes in trivial code (node:http, a one-row INSERT, undici)   p50 ${ms(floorP50)}   p95 ${ms(percentile(floor.latencies, 95))}   ` +
        `${(floorP50 / median(floor.commits)).toFixed(2)}× a commit: this machine's floor; fluksio as deployed adds ${ms(median(deployed.latencies) - floorP50)} to it`,
    );
    console.log(
      "  (submit → claim, through fluksio's own client: the submit request (HTTP, then one prepared INSERT that checks the token and leases the run to the claim parked in that process: one commit), then the claim's answer; a claim parked in another process is rung and claims with an UPDATE: a second commit. Each ratio is to the commits timed beside its own samples)",
    );
    const burstLine = (result: BurstResult): string =>
      `runs/s ${result.runsPerSecond.toFixed(0)}   drained in ${ms(result.drainMs)}   succeeded ${result.succeeded}   lost ${burst - result.succeeded}   claimed twice ${result.claimedTwice}${result.resubmitted + result.failedConnections ? `   (connections failed: ${result.resubmitted} submissions, resent; ${result.failedConnections} claims or finishes)` : ''}`;
    console.log(
      `\n## Burst: ${burst} no-op runs drained by 20 runner clients (claim + finish each; all on this machine's ${availableParallelism()} cores, which two app processes share with the clients and PostgreSQL: a replica adds capacity on a machine of its own)`,
    );
    console.log(`in this process, no balancer             ${burstLine(inProcess)}`);
    const one = behindBalancer.find((entry) => entry.processes === 1);
    for (const { processes, result, spread } of behindBalancer) {
      const ratio = one
        ? `   ${(result.runsPerSecond / one.result.runsPerSecond).toFixed(2)}× one process`
        : '';
      console.log(
        `${processes} fluksio app process${processes > 1 ? 'es' : ''} behind a balancer   ${burstLine(result)}${ratio}   (claims served: ${spread})`,
      );
    }
    console.log(`\n## Idle runner process\nRSS ${(rssKb / 1024).toFixed(1)} MiB after 4 s parked in a claim`);
  } finally {
    await redis.quit();
    await database.close();
    await plane.close();
    await scratch.close();
  }
}
