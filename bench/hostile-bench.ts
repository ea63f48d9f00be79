import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { createApiToken } from '../store/tokens/create-api-token.js';
import { createRunner } from '../store/runners/create-runner.js';
import { testAppCredentials } from '../test/github/test-app-credentials.js';
import { hostilePost, type HostileAnswer } from '../test/helpers/hostile-post.js';
import { makeRepo } from '../test/helpers/make-repo.js';
import { exited, fluksio, lineOf } from './fluksio-command.js';
import { ms } from './measure.js';
import { openScratchEnvironment } from './scratch-environment.js';

const HOSTILE_BYTES = 300 * 2 ** 20;
const CONCURRENT = 10;
/** Log lines and metric points the normal run's stage emits, every one to be stored once. */
const LINES = 300;

/**
 * Memory under hostile bodies (issue 9, acceptance 2): a `fluksio app` process with the
 * GitHub App, serving a normal run (a runner process executing a small pipeline that logs
 * and streams metrics), receives at once 10 POSTs of 300 MB to its webhook endpoint (with
 * forged GitHub headers, half declaring their length, half streamed) and 10 to the JSON
 * API without a token (likewise). Prints the control plane's peak RSS growth (target
 * < 64 MB), the slowest hostile answer (target < 1 s), and whether the normal run finished
 * with every event stored once. The hostile bodies are generated as they are sent.
 */
export async function benchHostile(): Promise<void> {
  const scratch = await openScratchEnvironment('hostile');
  const credentials = testAppCredentials();
  const env: Record<string, string> = {
    DATABASE_URL: scratch.databaseUrl,
    REDIS_URL: scratch.redisUrl,
    FLUKSIO_QUEUE_PREFIX: scratch.prefix,
    FLUKSIO_DATA_DIR: scratch.dataDir,
    FLUKSIO_ALLOW_FILE_URLS: 'true',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    APP_ID: String(credentials.appId),
    PRIVATE_KEY: credentials.privateKey,
    WEBHOOK_SECRET: credentials.webhookSecret,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
    GITHUB_API_URL: 'http://127.0.0.1:9',
  };
  const database = await openControlPlaneDatabase(readControlPlaneSettings(env), pino({ level: 'warn' }));
  const app = fluksio(['app'], scratch.dataDir, env);
  const workDir = await mkdtemp(join(tmpdir(), 'fluksio-bench-hostile-runner-'));
  const repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1\nstages:\n  train:\n    cmd: python3 train.py\n`,
      'train.py': `import time\nfor i in range(1, ${LINES + 1}):\n    print(f"line {i}")\n    print(f"::metric name=step::{i}")\n    time.sleep(0.01)\n`,
    },
  });
  let runner: ChildProcess | null = null;
  try {
    const url = (await lineOf(app, /listening on (http\S+)/))[1] as string;
    const apiToken = `fxt_${randomBytes(32).toString('base64url')}`;
    const repository = `local${repo.dir}`;
    await createApiToken({
      db: database.db,
      name: 'bench',
      repositories: [repository],
      scope: 'submit',
      tokenHash: hashToken(apiToken),
    });
    const runnerToken = `fxr_${randomBytes(32).toString('base64url')}`;
    await createRunner({
      db: database.db,
      name: 'bench-runner',
      owner: 'local',
      labels: [],
      repositories: [],
      tokenHash: hashToken(runnerToken),
    });
    runner = fluksio(['runner', '--work-dir', workDir], workDir, {
      FLUKSIO_URL: url,
      FLUKSIO_RUNNER_TOKEN: runnerToken,
    });
    const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiToken}`,
          'idempotency-key': randomUUID(),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (response.status >= 400)
        throw new Error(`${method} ${path} answered ${response.status}: ${json.error}`);
      return json;
    };
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    const submitted = await api('POST', '/api/v1/runs', {
      repository,
      commit,
      cloneUrl: `file://${repo.dir}`,
    });
    const runId = (submitted.run as { id: string }).id;
    const status = async () => ((await api('GET', `/api/v1/runs/${runId}`)).run as { status: string }).status;
    while ((await status()) === 'queued') await new Promise((resolve) => setTimeout(resolve, 50));

    const pid = app.pid as number;
    const before = await residentMiB(pid);
    let peak = before;
    const sampler = setInterval(() => {
      void residentMiB(pid).then(
        (now) => (peak = Math.max(peak, now)),
        () => undefined,
      );
    }, 10);
    const forged = {
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
    };
    const flood = (path: string, headers: Record<string, string>) =>
      Array.from({ length: CONCURRENT }, (_, index) =>
        hostilePost({ url: `${url}${path}`, bytes: HOSTILE_BYTES, headers, chunked: index % 2 === 1 }).catch(
          (error: Error): HostileAnswer => ({ status: 0, body: error.message, ms: Number.NaN, sent: 0 }),
        ),
      );
    const [webhooks, unauthenticated] = await Promise.all([
      Promise.all(flood('/api/github/webhooks', forged)),
      Promise.all(flood('/api/v1/runs', {})),
    ]);
    while (['queued', 'running'].includes(await status()))
      await new Promise((resolve) => setTimeout(resolve, 100));
    clearInterval(sampler);
    peak = Math.max(peak, await residentMiB(pid));

    const final = await status();
    const { lines } = (await api('GET', `/api/v1/runs/${runId}/logs/train`)) as { lines: string[] };
    const { series } = (await api('GET', `/api/v1/runs/${runId}/metrics`)) as {
      series: Record<string, { points: unknown[] }>;
    };
    const expected = Array.from({ length: LINES }, (_, index) => `line ${index + 1}`);
    const logOnce = lines.length === LINES && lines.every((line, index) => line === expected[index]);
    const pointsOnce = series.step?.points.length === LINES;
    const all = [...webhooks, ...unauthenticated];
    const slowest = Math.max(...all.map((answer) => answer.ms));
    const statuses = (answers: HostileAnswer[]) =>
      Object.entries(
        answers.reduce<Record<string, number>>((counts, answer) => {
          counts[answer.status] = (counts[answer.status] ?? 0) + 1;
          return counts;
        }, {}),
      )
        .map(([code, count]) => `${count}× ${code}`)
        .join(', ');

    console.log(
      `\n## Hostile bodies: ${CONCURRENT} webhook POSTs and ${CONCURRENT} API POSTs of 300 MB at once, no credential`,
    );
    console.log(
      `webhook answers   ${statuses(webhooks)}   (forged GitHub headers; half declare their length, half stream)`,
    );
    console.log(`API answers       ${statuses(unauthenticated)}   (no token)`);
    console.log(`slowest answer    ${ms(slowest)}   (target < 1 s)`);
    console.log(
      `control plane RSS ${before.toFixed(1)} MiB before, ${peak.toFixed(1)} MiB at peak: +${(peak - before).toFixed(1)} MiB   (target < 64 MB)`,
    );
    console.log(
      `normal run        ${final}; ${lines.length}/${LINES} log lines ${logOnce ? 'each stored once, in order' : 'NOT stored once'}; ${series.step?.points.length ?? 0}/${LINES} metric points${pointsOnce ? ', each once' : ' — NOT each once'}`,
    );
  } finally {
    runner?.kill('SIGTERM');
    app.kill('SIGTERM');
    await Promise.all([exited(runner), exited(app)]);
    await database.close();
    await repo.cleanup();
    await rm(workDir, { recursive: true, force: true });
    await scratch.close();
  }
}

async function residentMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
