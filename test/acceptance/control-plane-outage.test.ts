import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { startRunnerDaemon, type RunnerDaemon } from '../../runner/daemon/runner-daemon.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { startApp } from '../helpers/control-plane-processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';
import { startDyingFront, type DyingFront } from './dying-front.js';

/**
 * The control plane dies (SIGKILL) at the moment a runner sends one kind of request, and
 * stays down for longer than the runner's budget of retries for a request: the run's
 * result must still arrive once the control plane is back, as its events do. The runner
 * executes in this process with a small retry budget (two attempts, 20 ms apart), so the
 * outage outlasts it within a second instead of the half minute of the defaults; the
 * control plane is a real `fluksio app` process over PostgreSQL, started again on its port.
 */

let database: TestDatabase;
let world: ControlPlaneWorld;
let daemon: RunnerDaemon | null = null;
let front: DyingFront | null = null;
let workDir = '';

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await daemon?.stop();
  daemon = null;
  await front?.close();
  front = null;
  await world.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

const PIPELINE = {
  'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo "::metric name=loss::0.25" && echo trained > model.txt
    outs: [model.txt]
`,
  '.gitignore': 'model.txt\n',
};

/** The runner, in this process, talking to the control plane through `url`; its log kept in `log`. */
async function startRunner(url: string, log: string[]): Promise<RunnerDaemon> {
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  await createRunner({
    db: world.db,
    name: 'box',
    owner: 'local',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  workDir = await mkdtemp(join(tmpdir(), 'fluksio-outage-runner-'));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      log.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return startRunnerDaemon({
    url,
    token,
    workDir,
    environment: process.env,
    logger: pino({ level: 'info' }, sink),
    claimWaitSeconds: 1,
    requestRetries: 1,
    retryDelayMs: 20,
  });
}

/**
 * Submits the run, lets the control plane die at `trigger` and stay down until the
 * runner tried that request more often than its budget allows, starts the control plane
 * again on its port and resolves with the run's final report.
 */
async function outageAt(
  trigger: (method: string, url: string) => boolean,
  gaveUp: (front: DyingFront) => boolean,
  log: string[],
) {
  // The outage must not cost the lease: heartbeats stop while the finish is sent.
  await world.start({ FLUKSIO_LEASE_TTL: '30s' });
  const project = await world.repo(PIPELINE);
  await world.allow([project.repository]);
  const { env, dataDir } = world.app;
  const port = Number(new URL(world.app.url).port);
  front = await startDyingFront(
    () => world.app.url,
    trigger,
    () => world.app.stop('SIGKILL'),
  );
  daemon = await startRunner(front.url, log);
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  const dying = front;
  // Two attempts are the runner's budget.
  await waitFor(
    'the runner to try past its retry budget, or give up',
    () => dying.triggered() >= 5 || gaveUp(dying),
    30_000,
  );
  world.app = await startApp({
    databaseUrl: database.url,
    env,
    port,
    prefix: env.FLUKSIO_QUEUE_PREFIX,
    dataDir,
  });
  return { runId, report: await world.waitFor(runId, undefined, 60_000) };
}

test('the control plane killed as a run’s finish arrives, down past the runner’s retries: once it is back the run ends succeeded, with its metrics', async () => {
  const log: string[] = [];
  const { report } = await outageAt(
    (method, url) => method === 'POST' && /^\/api\/v1\/runs\/[^/]+\/finish$/.test(url),
    // It says so at error level.
    () => log.some((line) => line.includes('"level":50')),
    log,
  );
  expect(report.run.status, `${report.run.reason}\n${log.join('\n').slice(-1500)}`).toBe('succeeded');
  expect(report.metrics).toEqual({ loss: 0.25 });
});

test('the control plane killed as a stage’s out is uploaded, down past the runner’s retries: once it is back the out is stored and the run succeeds', async () => {
  const log: string[] = [];
  const { runId, report } = await outageAt(
    (method, url) => method === 'POST' && /^\/api\/v1\/blobs\/[^/]+\/uploads$/.test(url),
    // Its stage ends without the out: its finish event follows.
    (dying) => dying.sentSinceKill('"stage.finished"'),
    log,
  );
  expect(report.run.status, `${report.run.reason}\n${log.join('\n').slice(-1500)}`).toBe('succeeded');
  const [stage] = report.stages;
  expect(stage).toMatchObject({ name: 'train', status: 'ran' });
  const out = stage?.outs.find((record) => record.path === 'model.txt');
  expect(out).toBeDefined();
  const blob = await fetch(`${world.app.url}/api/v1/blobs/${out?.digest}?run=${runId}`, {
    headers: { authorization: `Bearer ${world.apiToken}` },
  });
  expect(blob.status).toBe(200);
  expect(await blob.text()).toBe('trained\n');
});

test('the control plane killed half-way through a large out’s upload: once it is back the out is uploaded again whole, stored under its digest, and the run succeeds', async () => {
  const log: string[] = [];
  await world.start({ FLUKSIO_LEASE_TTL: '30s' });
  const project = await world.repo({
    'fluksio.yml': `version: 1
stages:
  train:
    cmd: head -c 48000000 /dev/urandom > model.bin
    outs: [model.bin]
`,
    '.gitignore': 'model.bin\n',
  });
  await world.allow([project.repository]);
  const { env, dataDir } = world.app;
  const port = Number(new URL(world.app.url).port);
  // A balancer that streams requests through, and kills the control plane once 8 MB of a
  // blob's body passed it: the control plane dies with the upload half-read.
  let killed = false;
  let down = false;
  let triedSince = 0;
  const server = createServer((incoming, outgoing) => {
    const isBlob = incoming.method === 'PUT' && (incoming.url ?? '').startsWith('/api/v1/blobs/');
    if (down) {
      if (isBlob) triedSince += 1;
      incoming.resume();
      outgoing.writeHead(502).end('no control plane');
      return;
    }
    let passed = 0;
    if (isBlob) {
      incoming.on('data', (chunk: Buffer) => {
        passed += chunk.length;
        if (passed > 8_000_000 && !killed) {
          killed = down = true;
          void world.app.stop('SIGKILL');
        }
      });
    }
    const proxied = httpRequest(new URL(incoming.url ?? '/', world.app.url), {
      method: incoming.method,
      headers: incoming.headers,
    });
    proxied.on('response', (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    proxied.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502).end('the control plane died');
      else outgoing.destroy();
    });
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    daemon = await startRunner(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, log);
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
    });
    await waitFor(
      'the control plane to die mid-upload and the upload to be tried again',
      () => triedSince >= 2,
      60_000,
    );
    world.app = await startApp({
      databaseUrl: database.url,
      env,
      port,
      prefix: env.FLUKSIO_QUEUE_PREFIX,
      dataDir,
    });
    down = false;
    const report = await world.waitFor(runId, undefined, 90_000);
    expect(report.run.status, `${report.run.reason}\n${log.join('\n').slice(-1500)}`).toBe('succeeded');
    const out = report.stages[0]?.outs.find((record) => record.path === 'model.bin');
    expect(out).toMatchObject({ size: 48_000_000 });
    const blob = await fetch(`${world.app.url}/api/v1/blobs/${out?.digest}?run=${runId}`, {
      headers: { authorization: `Bearer ${world.apiToken}` },
    });
    expect(blob.status).toBe(200);
    const bytes = Buffer.from(await blob.arrayBuffer());
    expect(`sha256:${createHash('sha256').update(bytes).digest('hex')}`).toBe(out?.digest);
  } finally {
    await daemon?.stop();
    daemon = null;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}, 180_000);
