import { createHash } from 'node:crypto';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { DirectoryBlobStorage } from '../../app/blobs/directory-blob-storage.js';
import { openBlobStorage } from '../../app/blobs/open-blob-storage.js';
import { S3BlobStorage } from '../../app/blobs/s3-blob-storage.js';
import { readBlobStoreSettings } from '../../app/control-plane-settings.js';
import { deleteUnreferencedServerBlobs } from '../../cli/commands/delete-unreferenced-server-blobs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { holdClaimedRun } from './hold-claimed-run.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';

const DAY = 86_400_000;

let database: TestDatabase;
let plane: TestControlPlane;
let s3: TestS3 | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
});
afterEach(async () => {
  await plane.close();
  await s3?.close();
  s3 = undefined;
});

/**
 * gc chose a blob (named by nothing, older than its cut-off); then a new run produced the
 * same bytes and uploaded them (its ref recorded only after the bytes are written); then gc
 * deleted it. The run's result would name a blob that is gone. gc's seam between choosing
 * and deleting (onDecided) lets the upload land exactly there.
 */
test('an upload of the bytes gc chose to delete, landing before gc deletes them, keeps its blob', async () => {
  plane = await startTestControlPlane({ db: database.db });
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const runner = await plane.addRunner({ name: 'box', owner: 'acme' });
  expect((await plane.submit(submitter, { repository: 'acme/model' })).status).toBe(201);
  const claim = await plane.claim(runner.token);
  if (!claim) throw new Error('nothing claimed');
  const headers = { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id };

  const bytes = 'weights trained again';
  const hex = createHash('sha256').update(bytes).digest('hex');
  const digest = `sha256:${hex}`;
  // The same bytes, stored long ago by a run gc has since forgotten.
  const file = path.join(plane.blobsRoot, 'sha256', hex.slice(0, 2), hex);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
  const longAgo = new Date(Date.now() - 30 * DAY);
  await utimes(file, longAgo, longAgo);

  let uploaded = false;
  await deleteUnreferencedServerBlobs({
    db: database.db,
    storage: new DirectoryBlobStorage(plane.blobsRoot),
    live: new Set(),
    cutoffMs: Date.now() - 7 * DAY,
    onDecided: async (digests) => {
      expect(digests).toEqual([digest]);
      const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
        token: runner.token,
        headers: { ...headers, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      expect(put.status).toBe(201);
      uploaded = true;
    },
  });
  expect(uploaded).toBe(true);
  const read = await plane.call('GET', `/api/v1/blobs/${digest}`, { token: runner.token, headers });
  expect(read).toMatchObject({ status: 200, text: bytes });
});

test('the same in an S3 store: an upload finished between gc’s choice and its delete keeps its object', async () => {
  s3 = await startTestS3();
  plane = await startTestControlPlane({ db: database.db, env: s3.env });
  const runner = await holdClaimedRun(plane, 'acme/model', 'box');
  const bytes = 'weights trained again';
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  // The same bytes, stored long ago: a cut-off in the future makes the object old enough.
  await s3.write(`sha256/${digest.slice('sha256:'.length)}`, bytes, { checksum: true });
  const storage = openBlobStorage(readBlobStoreSettings(s3.env));
  if (!(storage instanceof S3BlobStorage)) throw new Error('not an S3 store');

  let uploaded = false;
  try {
    await deleteUnreferencedServerBlobs({
      db: database.db,
      storage,
      live: new Set(),
      cutoffMs: Date.now() + DAY,
      onDecided: async (digests) => {
        expect(digests).toEqual([digest]);
        const size = Buffer.byteLength(bytes);
        const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, {
          ...runner,
          json: { size },
        });
        expect(ticket.status, ticket.text).toBe(201);
        const { url, headers, uploadId } = ticket.json as {
          url: string;
          headers: Record<string, string>;
          uploadId: string;
        };
        expect((await fetch(url, { method: 'PUT', headers, body: bytes })).status).toBe(200);
        const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
          ...runner,
          json: { size },
        });
        expect(finish.status, finish.text).toBe(201);
        uploaded = true;
      },
    });
  } finally {
    storage.close();
  }
  expect(uploaded).toBe(true);
  expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, runner)).status).toBe(200);
  expect(await s3.keys('sha256/')).toContain(`sha256/${digest.slice('sha256:'.length)}`);
});
