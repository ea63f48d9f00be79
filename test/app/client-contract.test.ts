import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import {
  ForbiddenError,
  NotFoundError,
  StaleLeaseError,
  UnauthorizedError,
} from '../../client/control-plane-errors.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { emptyStageRecord } from '../../schemas/stage-record.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

const DIGEST = 'd'.repeat(64);

let database: TestDatabase;
let plane: TestControlPlane;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
});
afterEach(async () => {
  await plane.close();
});

const clientOf = (token: string) => new ControlPlaneClient({ url: plane.url, token, retries: 0 });

test("the runner daemon's client and the control plane speak the same protocol", async () => {
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const { token } = await plane.addRunner({ name: 'box', labels: ['gpu'] });
  await plane.submit(submitter, { labels: ['gpu'] });
  const client = clientOf(token);

  const claim = await client.claim(0, false);
  if (!claim) throw new Error('nothing claimed');
  const run = { runId: claim.run.id, lease: claim.lease };
  expect(await client.heartbeat(run)).toEqual({ cancel: false, reason: null, finishAs: null });
  expect(await client.start(run, { codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) })).toEqual({
    status: 'running',
    reason: null,
  });

  const bytes = 'weights '.repeat(10_000);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}` as BlobDigest;
  expect(await client.hasBlob(run, digest)).toBe(false);
  await client.putBlob(run, digest, { open: () => Readable.from([Buffer.from(bytes)]), size: bytes.length });
  expect(await client.hasBlob(run, digest)).toBe(true);
  expect(await client.getBlob(run, digest, (body) => text(body))).toBe(bytes);
  expect(await client.cacheEntry(run, '3'.repeat(64))).toBeNull();

  const events = [{ seq: 0, type: 'stage.log' as const, stage: 'train', lines: ['hello'] }];
  expect(await client.sendEvents(run, { attempt: claim.run.attempt, events })).toEqual({
    applied: 1,
    acked: 1,
  });
  await client.finish(run, { status: 'succeeded', reason: null, metrics: {} });
  await expect(client.heartbeat(run)).rejects.toBeInstanceOf(StaleLeaseError);
  expect(await client.claim(0, false)).toBeNull();
});

test("a submitter's client and the control plane speak the same protocol: submit, read, log, metrics, pull, cancel", async () => {
  const submitter = clientOf(await plane.addApiToken({ repositories: ['acme/model'] }));
  const runner = clientOf((await plane.addRunner({ name: 'box', labels: ['gpu'] })).token);
  expect(await submitter.health()).toEqual({ ok: true });

  const request = { repository: 'acme/model', commit: COMMIT, labels: ['gpu'], params: { lr: 0.1 } };
  const queued = await submitter.submitRun(request, 'contract-1');
  expect(queued.run).toMatchObject({ status: 'queued', params: { lr: 0.1 } });
  expect((await submitter.submitRun(request, 'contract-1')).run.id).toBe(queued.run.id);

  const claim = await runner.claim(0, false);
  if (!claim) throw new Error('nothing claimed');
  const run = { runId: claim.run.id, lease: claim.lease };
  expect(await runner.start(run, { codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) })).toEqual({
    status: 'running',
    reason: null,
  });
  const bytes = 'weights '.repeat(1000);
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}` as BlobDigest;
  expect(await runner.putBlob(run, digest, { bytes: Buffer.from(bytes) })).toEqual({
    digest,
    size: bytes.length,
  });
  const events = [
    { type: 'stage.started' as const, stage: 'train', at: new Date().toISOString() },
    { type: 'stage.log' as const, stage: 'train', lines: ['epoch 1', 'epoch 2'] },
    {
      type: 'metric.points' as const,
      points: [
        { stage: 'train', name: 'loss', step: 1, value: 0.5 },
        { stage: 'train', name: 'loss', step: 2, value: 0.25 },
      ],
    },
    { type: 'stage.finished' as const, stage: emptyStageRecord('train', 'ran') },
  ].map((event, seq) => ({ seq, ...event }));
  await runner.sendEvents(run, { attempt: claim.run.attempt, events });
  expect(await runner.finish(run, { status: 'succeeded', reason: null, metrics: { loss: 0.25 } })).toEqual({
    status: 'succeeded',
  });

  const report = await submitter.run(queued.run.id);
  expect(report).toMatchObject({ run: { status: 'succeeded' }, runner: 'box', metrics: { loss: 0.25 } });
  expect(await submitter.runMetrics(queued.run.id)).toEqual({
    loss: {
      stage: 'train',
      points: [
        { step: 1, value: 0.5 },
        { step: 2, value: 0.25 },
      ],
    },
  });
  expect(await submitter.stageLog(queued.run.id, 'train')).toEqual(['epoch 1', 'epoch 2']);
  expect(await submitter.pullBlob(queued.run.id, digest, (body) => text(body))).toBe(bytes);

  const second = await submitter.submitRun(request, 'contract-2');
  const cancelled = await submitter.cancelRun(second.run.id, { reason: 'not needed' });
  expect(cancelled.run).toMatchObject({ id: second.run.id, status: 'cancelled', reason: 'not needed' });
});

test('what the control plane refuses comes back as the error class a caller branches on, with its sentence', async () => {
  const submitter = clientOf(await plane.addApiToken({ repositories: ['acme/model'] }));
  const reader = clientOf(await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' }));
  const queued = await submitter.submitRun({ repository: 'acme/model', commit: COMMIT }, 'refusals');

  await expect(submitter.run('01NOSUCHRUN')).rejects.toBeInstanceOf(NotFoundError);
  await expect(submitter.stageLog(queued.run.id, 'nope')).rejects.toThrow(
    /answered 404 to GET \/api\/v1\/runs\/\w+\/logs\/nope: Run \w+ has no stage "nope"/,
  );
  await expect(clientOf('not-a-token-at-all').run(queued.run.id)).rejects.toBeInstanceOf(UnauthorizedError);
  expect((await reader.run(queued.run.id)).run.id).toBe(queued.run.id);
  await expect(reader.cancelRun(queued.run.id)).rejects.toBeInstanceOf(ForbiddenError);
  await expect(
    reader.submitRun({ repository: 'acme/model', commit: COMMIT }, 'read-only'),
  ).rejects.toBeInstanceOf(ForbiddenError);
  await expect(
    submitter.pullBlob(queued.run.id, `sha256:${'0'.repeat(64)}`, (body) => text(body)),
  ).rejects.toBeInstanceOf(NotFoundError);
});
