import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { ControlPlaneError } from '../../client/control-plane-errors.js';
import { BlobCorruptError, BlobMissingError } from '../../runner/blobs/blob-errors.js';
import { LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { RemoteBlobStore } from '../../runner/daemon/remote-blob-store.js';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { checksumOf } from '../helpers/s3-checksum-front.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';
import { holdClaimedRun, type HeldRun } from './hold-claimed-run.js';

// The production path: a store that keeps SHA-256 checksums as AWS S3 does, and a
// control plane that verifies them (FLUKSIO_S3_VERIFY_CHECKSUMS=true, the default).

let database: TestDatabase;
let s3: TestS3;
let plane: TestControlPlane;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  s3 = await startTestS3({ checksums: true });
  plane = await startTestControlPlane({ db: database.db, env: s3.env });
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-verified-'));
});
afterEach(async () => {
  await plane.close();
  await s3.close();
  await rm(dir, { recursive: true, force: true });
});

function digestOf(bytes: Buffer): BlobDigest {
  return blobDigest(createHash('sha256').update(bytes).digest('hex'));
}

const keyOf = (digest: BlobDigest): string => `sha256/${digest.slice('sha256:'.length)}`;

/** The runner's blob store for `held`'s run, over a local cache of its own (as a fresh box has). */
async function runnerBlobs(held: HeldRun): Promise<{ blobs: RemoteBlobStore; cache: LocalBlobCache }> {
  const client = new ControlPlaneClient({
    url: plane.url,
    token: held.token,
    retries: 1,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 50,
  });
  const cache = await LocalBlobCache.open({
    root: path.join(dir, randomBytes(4).toString('hex')),
    maxBytes: 2 ** 30,
  });
  return { blobs: new RemoteBlobStore({ client, run: held.lease, cache }), cache };
}

/** Whether the control plane holds `digest` for the run's repository (its HEAD). */
async function recorded(held: HeldRun, digest: BlobDigest): Promise<boolean> {
  return (await plane.call('HEAD', `/api/v1/blobs/${digest}`, held)).status === 200;
}

test('a verified upload is recorded under its digest with the checksum S3 confirmed, and another box downloads it verified', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const weights = randomBytes(200_000);
  const file = path.join(dir, 'model.bin');
  await writeFile(file, weights);
  const { blobs } = await runnerBlobs(held);
  const { digest } = await blobs.putFile(file);

  expect(await s3.keys()).toEqual([keyOf(digest)]);
  expect(await s3.checksum(keyOf(digest))).toBe(checksumOf(weights));
  expect(await recorded(held, digest)).toBe(true);
  const { blobs: freshBox } = await runnerBlobs(held);
  await freshBox.getToFile(digest, path.join(dir, 'downloaded.bin'));
  expect((await readFile(path.join(dir, 'downloaded.bin'))).equals(weights)).toBe(true);
  const metrics = (await plane.call('GET', '/metrics')).text;
  expect(metrics).toMatch(/^fluksio_blob_bytes_total\{direction="in"\} 0$/m);
  expect(metrics).toMatch(/^fluksio_blob_bytes_total\{direction="out"\} 0$/m);
});

test('the upload URL signs the length and the checksum: a PUT that drops, changes or moves the checksum, or sends other bytes under it, stores nothing', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const weights = Buffer.from('model weights');
  const other = Buffer.from('other weights');
  const digest = digestOf(weights);
  const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, { ...held, json: { size: 13 } });
  expect(ticket.status, ticket.text).toBe(201);
  const { url, headers, uploadId } = ticket.json as {
    url: string;
    headers: Record<string, string>;
    uploadId: string;
  };
  expect(headers).toEqual({ 'content-length': '13', 'x-amz-checksum-sha256': checksumOf(weights) });
  expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe(
    'content-length;host;x-amz-checksum-sha256',
  );

  const put = async (target: string, sent: Record<string, string>) => {
    const answer = await fetch(target, { method: 'PUT', headers: sent, body: other });
    return { status: answer.status, code: /<Code>([^<]*)<\/Code>/.exec(await answer.text())?.[1] };
  };
  const { 'x-amz-checksum-sha256': _dropped, ...withoutChecksum } = headers;
  expect(await put(url, withoutChecksum)).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
  expect(await put(url, { ...headers, 'x-amz-checksum-sha256': checksumOf(other) })).toEqual({
    status: 403,
    code: 'SignatureDoesNotMatch',
  });
  const inQuery = `${url}&x-amz-checksum-sha256=${encodeURIComponent(checksumOf(other))}`;
  expect(await put(inQuery, withoutChecksum)).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
  // A runner that sends other bytes of the same size under the announced checksum.
  expect(await put(url, headers)).toEqual({ status: 400, code: 'BadDigest' });

  expect(await s3.keys()).toEqual([]);
  const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
    ...held,
    json: { size: 13 },
  });
  expect(finish.status).toBe(400);
  expect(finish.json.error).toContain('nothing was uploaded');
  expect(await recorded(held, digest)).toBe(false);
});

test('a runner whose output changed between hashing and uploading (same size) is refused by the store: its upload fails with BadDigest and nothing is recorded', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const weights = Buffer.alloc(50_000, 1);
  const file = path.join(dir, 'model.bin');
  await writeFile(file, weights);
  const { blobs, cache } = await runnerBlobs(held);
  // The runner hashes the file into its cache, then streams the file itself to the store.
  const hashInto = cache.putFile.bind(cache);
  cache.putFile = async (source) => {
    const stored = await hashInto(source);
    await writeFile(source, Buffer.alloc(50_000, 2));
    return stored;
  };

  const failed = await blobs.putFile(file).then(
    () => null,
    (error: unknown) => error,
  );
  // What the stage reports as "could not store its outputs: …" (execute-stage): it fails, and nothing is cached.
  expect(failed).toBeInstanceOf(ControlPlaneError);
  expect((failed as ControlPlaneError).message).toMatch(
    /^The blob store answered 400 to PUT 127\.0\.0\.1:\d+: BadDigest: The SHA256 you specified did not match the calculated checksum\.$/,
  );
  expect(await s3.keys()).toEqual([]);
  expect(await recorded(held, digestOf(weights))).toBe(false);
});

test('an upload whose object S3 keeps with another checksum is refused when finished, and nothing is recorded', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const digest = digestOf(Buffer.from('model weights'));
  const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, { ...held, json: { size: 13 } });
  const { uploadId } = ticket.json as { uploadId: string };
  // Someone with the bucket's keys (not the presigned URL) puts other bytes at the upload's place.
  await s3.write(`uploads/${held.lease.runId}/${uploadId}`, 'other weights', { checksum: true });

  const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
    ...held,
    json: { size: 13 },
  });
  expect(finish.status).toBe(400);
  expect(finish.json.error).toContain(
    `the store's SHA-256 checksum is not that of ${digest}; nothing was stored`,
  );
  expect(await s3.keys()).toEqual([]);
  expect(await recorded(held, digest)).toBe(false);
});

test('an object overwritten in the bucket is no longer the blob: the control plane calls it absent, and the next upload mends it', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const weights = Buffer.from('model weights');
  const { blobs } = await runnerBlobs(held);
  const { digest } = await blobs.putBytes(weights);
  await s3.write(keyOf(digest), 'other weights');

  expect(await recorded(held, digest)).toBe(false);
  const { blobs: freshBox } = await runnerBlobs(held);
  await expect(freshBox.getBytes(digest)).rejects.toBeInstanceOf(BlobMissingError);
  await freshBox.putBytes(weights);
  expect((await s3.read(keyOf(digest)))?.equals(weights)).toBe(true);
  expect(await s3.checksum(keyOf(digest))).toBe(checksumOf(weights));
  expect(await recorded(held, digest)).toBe(true);
});

test('bytes damaged under a checksum that still matches are caught at the download end, and mended by the next upload', async () => {
  const held = await holdClaimedRun(plane, 'acme/model', 'box');
  const weights = Buffer.from('model weights');
  const { blobs } = await runnerBlobs(held);
  const { digest } = await blobs.putBytes(weights);
  await s3.damage(keyOf(digest), 'other weights');

  expect(await recorded(held, digest)).toBe(true);
  const { blobs: freshBox } = await runnerBlobs(held);
  await expect(freshBox.getBytes(digest)).rejects.toBeInstanceOf(BlobCorruptError);
  await freshBox.putBytes(weights);
  expect((await s3.read(keyOf(digest)))?.equals(weights)).toBe(true);
});
