import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { SCRIPTED_RUNNER_SETTINGS, ScriptedRunner } from './scripted-runner.js';
import { forwardRequest } from '../helpers/forward-request.js';

const PIPELINE = `version: 1
stages:
  train:
    cmd: echo weights > model.txt
    outs: [model.txt]
  features:
    cmd: mkdir -p feats && echo alpha > feats/a.txt
    outs: [feats]
`;
const WEIGHTS = 'weights\n';
const WEIGHTS_DIGEST = digestOf(WEIGHTS);
/** A directory out's manifest (of an empty directory), named by a kept run: gc reads it from the bucket. */
const MANIFEST = '{"files":[],"version":1}';
const MANIFEST_DIGEST = digestOf(MANIFEST);

let database: TestDatabase;
let world: ControlPlaneWorld;
let s3: TestS3;
let front: Server | undefined;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  world = new ControlPlaneWorld(database.db, database.url);
  s3 = await startTestS3();
});
afterEach(async () => {
  if (front) {
    front.closeAllConnections();
    front.close();
    await once(front, 'close');
  }
  await world.close();
  await s3.close();
});

function digestOf(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * An HTTP front before the test S3 that, the first time a request's path ends with
 * `pathEnd`, runs `hook` before forwarding it: a way to act at an exact point of a
 * `fluksio gc` that talks to the bucket through it.
 */
async function frontWithHook(pathEnd: string, hook: () => Promise<void>): Promise<string> {
  const target = new URL(s3.endpoint);
  let pending: (() => Promise<void>) | null = hook;
  front = createServer((request, response) => {
    void (async () => {
      if (pending !== null && new URL(request.url ?? '/', target).pathname.endsWith(pathEnd)) {
        const run = pending;
        pending = null;
        await run();
      }
      forwardRequest(target, request, response);
    })();
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}

/** Uploads `bytes` as a blob of the claimed run through a presigned URL, as a runner does. */
async function uploadPresigned(runner: ScriptedRunner, claim: Claim, bytes: string): Promise<void> {
  const digest = digestOf(bytes);
  const size = Buffer.byteLength(bytes);
  const lease = { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id };
  const ticket = await runner.call('POST', `/api/v1/blobs/${digest}/uploads`, { size }, lease);
  expect(ticket.status, ticket.text).toBe(201);
  const { url, headers, uploadId } = JSON.parse(ticket.text) as {
    url: string;
    headers: Record<string, string>;
    uploadId: string;
  };
  expect((await fetch(url, { method: 'PUT', headers, body: bytes })).status).toBe(200);
  const finish = await runner.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, { size }, lease);
  expect(finish.status, finish.text).toBe(201);
}

test('a run that finishes while gc reads the database keeps the blobs its stages name', async () => {
  await world.start({ ...s3.env, ...SCRIPTED_RUNNER_SETTINGS });
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\nfeats\n' });
  await world.allow([project.repository]);
  const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };
  const scripted = await ScriptedRunner.register(database.db, world.app.url);

  // A succeeded run with a directory out: gc keeps it (the baseline) and reads its manifest.
  const baselineId = await world.submit(base);
  const baseline = await scripted.claim();
  expect(baseline.run.id).toBe(baselineId);
  await scripted.start(baseline);
  // Stored before it is named: a stage may name only blobs its repository holds.
  await uploadPresigned(scripted, baseline, MANIFEST);
  const features = [{ path: 'feats', kind: 'dir' as const, digest: MANIFEST_DIGEST, size: 0 }];
  expect((await scripted.reportStage(baseline, 0, 'features', features)).status).toBe(200);
  expect((await scripted.finish(baseline)).status).toBe(200);

  // A run uploads its weights and is still running when gc starts...
  const runId = await world.submit({ ...base, noCache: true });
  const claim = await scripted.claim();
  expect(claim.run.id).toBe(runId);
  await scripted.start(claim);
  await uploadPresigned(scripted, claim, WEIGHTS);

  // ...and reports its stage and finishes once gc has read which stages name which blobs
  // (it reads the manifest from the bucket right after) — a run that lasted longer than
  // --keep-days, as every run does with --keep-days 0.
  const answers: number[] = [];
  const endpoint = await frontWithHook(MANIFEST_DIGEST.slice('sha256:'.length), async () => {
    const out = { path: 'model.txt', kind: 'file' as const, digest: WEIGHTS_DIGEST, size: WEIGHTS.length };
    answers.push((await scripted.reportStage(claim, 0, 'train', [out])).status);
    answers.push((await scripted.finish(claim)).status);
  });
  const gc = await runCli(['gc', '--keep-days', '0', '--json'], {
    cwd: world.app.dataDir,
    env: { DATABASE_URL: database.url, ...s3.env, FLUKSIO_S3_ENDPOINT: endpoint },
  });
  expect(gc.code, gc.stderr).toBe(0);
  expect(answers).toEqual([200, 200]);
  expect((await world.report(runId)).run.status).toBe('succeeded');

  // The run's weights are still there for whoever pulls them.
  expect(await s3.keys('sha256/')).toContain(`sha256/${WEIGHTS_DIGEST.slice('sha256:'.length)}`);
  const pull = await runCli(['pull', runId, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(pull.code, pull.stderr).toBe(0);
  expect(await readFile(join(project.repo.dir, 'pulled', 'model.txt'), 'utf8')).toBe(WEIGHTS);
});
