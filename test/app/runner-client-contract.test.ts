import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../runner/daemon/control-plane-client.js';
import { StaleLeaseError } from '../../runner/daemon/control-plane-errors.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { digestOf } from '../../schemas/canonical-json.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';

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

test("the runner daemon's client and the control plane speak the same protocol", async () => {
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const { token } = await plane.addRunner({ name: 'box', labels: ['gpu'] });
  await plane.submit(submitter, { labels: ['gpu'] });
  const client = new ControlPlaneClient({ url: plane.url, token, retries: 0 });

  const claim = await client.claim(0, false);
  if (!claim) throw new Error('nothing claimed');
  const run = { runId: claim.run.id, lease: claim.lease };
  expect(await client.heartbeat(run)).toEqual({ cancel: false, reason: null, finishAs: null });
  const params = claim.run.params;
  expect(
    await client.start(run, {
      codeDigest: DIGEST,
      envDigest: DIGEST,
      params,
      paramsDigest: digestOf(params),
    }),
  ).toEqual({
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
