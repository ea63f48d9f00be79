import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { RemoteBlobStore } from '../../runner/daemon/remote-blob-store.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { runs } from '../../schemas/tables/runs.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { SCRIPTED_RUNNER_SETTINGS, ScriptedRunner } from './scripted-runner.js';

/** `train` stores model.txt; `check` fails the run when asked, so no run becomes a kept baseline. */
const PIPELINE = `version: 1
params:
  verdict: { type: string, default: ok }
stages:
  train:
    cmd: echo weights > model.txt
    outs: [model.txt]
  check:
    cmd: test \${verdict} = ok
    deps: [model.txt]
    params: [verdict]
`;
const WEIGHTS = 'weights\n';
const WEIGHTS_DIGEST = `sha256:${createHash('sha256').update(WEIGHTS).digest('hex')}`;

let database: TestDatabase;
let world: ControlPlaneWorld;
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
  await world.close();
});

/** Every blob file the control plane holds, by digest. */
async function storedBlobs(): Promise<string[]> {
  const root = join(world.app.dataDir, 'blobs', 'sha256');
  const names = await readdir(root, { recursive: true }).catch(() => [] as string[]);
  return names
    .map((name) => name.split('/').at(-1) ?? '')
    .filter((name) => /^[0-9a-f]{64}$/.test(name))
    .map((name) => `sha256:${name}`);
}

/** Makes everything stored so far 40 days old: rows and blob files. */
async function ageEverything(): Promise<void> {
  const past = sql`now() - interval '40 days'`;
  await database.db.update(runs).set({ createdAt: past, finishedAt: past });
  await database.db.update(cacheEntries).set({ createdAt: past });
  await database.db.update(blobRefs).set({ createdAt: past, confirmedAt: past });
  const then = new Date(Date.now() - 40 * 86_400_000);
  const root = join(world.app.dataDir, 'blobs', 'sha256');
  for (const digest of await storedBlobs()) {
    await utimes(join(root, digest.slice(7, 9), digest.slice(7)), then, then);
  }
}

test('gc never collects a blob a running run was told is stored, and the run pulls it after it succeeds', async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' });
  await world.allow([project.repository]);
  const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };

  // An old run stored the weights (and its logs), then failed: nothing keeps it.
  const runner = await world.runner('box');
  const oldRun = await world.submit({ ...base, params: { verdict: 'fail' } });
  expect((await world.waitFor(oldRun)).run.status).toBe('failed');
  await runner.stop('SIGTERM');
  expect(await storedBlobs()).toContain(WEIGHTS_DIGEST);
  const oldBlobs = await storedBlobs();
  await ageEverything();

  // A new run is told the weights are stored and skips the upload...
  const runId = await world.submit({ ...base, noCache: true });
  const scripted = await ScriptedRunner.register(database.db, world.app.url);
  const claim = await scripted.claim();
  expect(claim.run.id).toBe(runId);
  await scripted.start(claim);
  expect(await scripted.head(claim, WEIGHTS_DIGEST)).toBe(200);

  // ...and gc runs before its stage's finish arrives, with a short and with no grace period.
  const admin = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir };
  for (const keepDays of ['1', '0']) {
    const gc = await runCli(['gc', '--keep-days', keepDays, '--json'], {
      cwd: world.app.dataDir,
      env: admin,
    });
    expect(gc.code, gc.stderr).toBe(0);
  }
  // gc did collect: the old run and its log blobs are gone, the weights are not.
  expect(await world.row(oldRun).catch(() => null)).toBeNull();
  const left = await storedBlobs();
  expect(left).toContain(WEIGHTS_DIGEST);
  expect(left.length).toBeLessThan(oldBlobs.length);

  const finished = await scripted.reportStage(claim, 0, 'train', [
    { path: 'model.txt', kind: 'file', digest: WEIGHTS_DIGEST, size: WEIGHTS.length },
  ]);
  expect(finished.status, finished.text).toBe(200);
  expect((await scripted.finish(claim)).status).toBe(200);
  expect((await world.report(runId)).run.status).toBe('succeeded');

  const pull = await runCli(['pull', runId, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(pull.code, pull.stderr).toBe(0);
  expect(await readFile(join(project.repo.dir, 'pulled', 'model.txt'), 'utf8')).toBe(WEIGHTS);
  expect(existsSync(join(project.repo.dir, 'model.txt'))).toBe(false);
});

test('a ref confirmed by a run that is still running survives gc, even without any grace period', async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' });
  await world.allow([project.repository]);
  const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };
  const runId = await world.submit(base);
  const scripted = await ScriptedRunner.register(database.db, world.app.url);
  const claim = await scripted.claim();
  await scripted.start(claim);
  const digest = await scripted.putBlob(claim, WEIGHTS);
  await ageEverything();
  await database.db.update(runs).set({ status: 'running' }).where(eq(runs.id, runId));

  const admin = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir };
  const gc = await runCli(['gc', '--keep-days', '0'], { cwd: world.app.dataDir, env: admin });
  expect(gc.code, gc.stderr).toBe(0);
  expect(await storedBlobs()).toContain(digest);
  expect(await scripted.head(claim, digest)).toBe(200);
});

test("gc never collects a blob a running run restored from its runner's own blob cache, and the run pulls it after it succeeds", async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' });
  await world.allow([project.repository]);
  const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };

  // An old run stored the weights, then failed: nothing keeps it once it is old.
  const runner = await world.runner('box');
  const oldRun = await world.submit({ ...base, params: { verdict: 'fail' } });
  expect((await world.waitFor(oldRun)).run.status).toBe('failed');
  await runner.stop('SIGTERM');
  await ageEverything();

  // A new run restores the weights of the old run's cache entry: this box still has them.
  const runId = await world.submit(base);
  const scripted = await ScriptedRunner.register(database.db, world.app.url);
  const claim = await scripted.claim();
  expect(claim.run.id).toBe(runId);
  await scripted.start(claim);
  const scratch = await mkdtemp(join(tmpdir(), 'fluksio-gc-restore-'));
  try {
    const cache = await LocalBlobCache.open({ root: join(scratch, 'blobs'), maxBytes: 2 ** 20 });
    await cache.putBytes(Buffer.from(WEIGHTS));
    const blobs = new RemoteBlobStore({
      client: new ControlPlaneClient({ url: world.app.url, token: scripted.token }),
      run: { runId, lease: claim.lease },
      cache,
    });
    const restored = join(scratch, 'model.txt');
    await blobs.getToFile(WEIGHTS_DIGEST as BlobDigest, restored, WEIGHTS.length);
    expect(await readFile(restored, 'utf8')).toBe(WEIGHTS);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }

  // gc runs before the cached stage's finish arrives.
  const admin = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir };
  const gc = await runCli(['gc', '--keep-days', '1'], { cwd: world.app.dataDir, env: admin });
  expect(gc.code, gc.stderr).toBe(0);
  expect(await world.row(oldRun).catch(() => null)).toBeNull();

  const finished = await scripted.reportStage(claim, 0, 'train', [
    { path: 'model.txt', kind: 'file', digest: WEIGHTS_DIGEST, size: WEIGHTS.length },
  ]);
  expect(finished.status, finished.text).toBe(200);
  expect((await scripted.finish(claim)).status).toBe(200);
  const pull = await runCli(['pull', runId, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(pull.code, pull.stderr).toBe(0);
  expect(await readFile(join(project.repo.dir, 'pulled', 'model.txt'), 'utf8')).toBe(WEIGHTS);
});
