import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { startGitHubDouble } from '../test/github/github-double.js';
import { sendWebhook } from '../test/github/send-webhook.js';
import { pushPayload } from '../test/github/webhook-fixtures.js';
import { openCommitReference } from './durable-commit.js';
import { median, ms, percentile } from './measure.js';
import { openScratchEnvironment } from './scratch-environment.js';

const PIPELINE = `version: 1
on:
  push: { branches: [main] }
stages:
  train:
    cmd: python3 train.py
`;
const ACCEPTED = 300;
const FLUKSIO_BIN = path.join(import.meta.dirname, '..', 'bin', 'fluksio.js');
const END_TO_END = 40;

/**
 * The GitHub App's intake against the GitHub double (every request validated against
 * GitHub's OpenAPI description), over real HTTP with real signatures: how long a signed
 * `push` delivery waits for its answer while the worker processes the earlier ones (target
 * p99 under 50 ms), next to a `GET /healthz` of the same server; and how long from sending
 * a delivery until GitHub has the run's check run (read the pipeline at the commit, queue
 * the run, create the check run).
 */
export async function benchGitHub(): Promise<void> {
  await benchIntake({ split: false });
  await benchIntake({ split: true });
}

/**
 * One measurement of the intake: `split` runs the control plane as a `--role web` and a
 * `--role worker` process (the built `fluksio`), else as one `--role all` process.
 */
async function benchIntake({ split }: { split: boolean }): Promise<void> {
  const scratch = await openScratchEnvironment('github');
  const double = await startGitHubDouble();
  const repo = double.addRepository({ owner: 'acme', name: 'model' });
  const env = {
    DATABASE_URL: scratch.databaseUrl,
    REDIS_URL: scratch.redisUrl,
    FLUKSIO_QUEUE_PREFIX: scratch.prefix,
    FLUKSIO_DATA_DIR: scratch.dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    APP_ID: String(double.credentials.appId),
    PRIVATE_KEY: double.credentials.privateKey,
    WEBHOOK_SECRET: double.credentials.webhookSecret,
    GITHUB_API_URL: double.url,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
  };
  // Every role in a process of its own: this one holds the GitHub double (whose answers to
  // the worker's calls are validated against the OpenAPI description, CPU of its own) and
  // the client, which would otherwise share the intake's event loop.
  const web = await startAppProcess(split ? 'web' : 'all', env);
  const worker = split ? await startAppProcess('worker', env) : null;
  const plane = { url: web.url };
  const webhookUrl = `${plane.url}/api/github/webhooks`;
  const secret = double.credentials.webhookSecret;
  // main's history, newest first: each push adds a commit, whose run looks for its baseline there.
  const history: string[] = [];
  const push = () => {
    const after = randomBytes(20).toString('hex');
    history.unshift(after);
    double.setFile(repo.fullName, after, 'fluksio.yml', PIPELINE);
    double.setCommits(repo.fullName, history.slice(0, 100), { branch: 'main' });
    return pushPayload({ repo, ref: 'main', after, before: history[1] });
  };
  const deliver = async (delivery: ReturnType<typeof push>) => {
    const response = await sendWebhook(webhookUrl, delivery, secret);
    if (response.status !== 200) throw new Error(`the webhook answered ${response.status}: ${response.body}`);
    return response.ms;
  };
  try {
    // Warm up: the first deliveries mint the installation token and open connections.
    for (let i = 0; i < 5; i += 1) await deliver(push());
    await waitForCheckRuns(double, repo.fullName, history.length);

    const health: number[] = [];
    for (let i = 0; i < 100; i += 1) {
      const started = performance.now();
      await (await fetch(`${plane.url}/healthz`)).text();
      health.push(performance.now() - started);
    }
    // A durable commit timed before each delivery: accepting one stores it (one commit).
    const reference = await openCommitReference(scratch.databaseUrl);
    const commits: number[] = [];
    const accepted: number[] = [];
    for (let i = 0; i < ACCEPTED; i += 1) {
      commits.push(await reference.time());
      accepted.push(await deliver(push()));
    }
    await reference.close();
    const drainStarted = performance.now();
    await waitForCheckRuns(double, repo.fullName, history.length, 120_000);
    const drainMs = performance.now() - drainStarted;

    const toCheckRun: number[] = [];
    for (let i = 0; i < END_TO_END; i += 1) {
      const delivery = push();
      const started = Date.now();
      await deliver(delivery);
      const created = await waitForCheckRuns(double, repo.fullName, history.length);
      toCheckRun.push(created.getTime() - started);
    }
    const violations = double.violations.length;

    console.log(
      `\n## GitHub App: webhook intake against the GitHub double, ${split ? 'with the worker in its own process (--role web + --role worker)' : 'one process (--role all)'}`,
    );
    console.log(
      `GET /healthz of the same server            p50 ${ms(median(health))}   p99 ${ms(percentile(health, 99))}   (reference)`,
    );
    console.log(
      `one durable PostgreSQL commit              p50 ${ms(median(commits))}   p99 ${ms(percentile(commits, 99))}   (reference, timed between the deliveries)`,
    );
    console.log(
      `signed push delivery → 200 (${ACCEPTED} in a row)   p50 ${ms(median(accepted))}   p99 ${ms(percentile(accepted, 99))}   ` +
        `(${(percentile(accepted, 99) / percentile(health, 99)).toFixed(1)}× /healthz, ${(median(accepted) / median(commits)).toFixed(1)}× a commit at p50; target p99 < 50 ms: ${percentile(accepted, 99) < 50 ? 'met' : 'missed'})`,
    );
    console.log(
      `  the worker then made their ${ACCEPTED} check runs within ${ms(drainMs)} after the last answer`,
    );
    console.log(
      `delivery sent → check run created on GitHub   p50 ${ms(median(toCheckRun))}   p99 ${ms(percentile(toCheckRun, 99))}   ` +
        `(${END_TO_END} one at a time; ${(median(toCheckRun) / median(health)).toFixed(0)}× the reference at p50)`,
    );
    console.log(`requests the double refused as invalid against the OpenAPI description: ${violations}`);
  } finally {
    for (const child of [web.child, worker?.child]) {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    }
    await double.close();
    await scratch.close();
  }
}

/** Waits until the double holds `count` check runs; the time the last one was created. */
async function waitForCheckRuns(
  double: Awaited<ReturnType<typeof startGitHubDouble>>,
  repository: string,
  count: number,
  timeoutMs = 30_000,
): Promise<Date> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const checkRuns = double.checkRuns(repository);
    const newest = checkRuns.at(-1)?.history[0]?.at;
    if (checkRuns.length >= count && newest) return newest;
    if (Date.now() > deadline)
      throw new Error(`only ${checkRuns.length} of ${count} check runs reached the GitHub double`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** `fluksio app --role ROLE` as a process of its own (the build `npm run bench` made), once it listens. */
async function startAppProcess(
  role: 'web' | 'worker' | 'all',
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FLUKSIO_BIN, 'app', '--role', role], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (http\S+)/.exec(output);
      if (listening) resolve(listening[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the ${role} process exited with ${code}: ${output}`)));
  });
  return { child, url };
}
