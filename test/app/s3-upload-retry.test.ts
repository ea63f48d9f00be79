import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { blobDigest } from '../../schemas/blob-digest.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';
import { holdClaimedRun } from './hold-claimed-run.js';
import { forwardRequest } from '../helpers/forward-request.js';

let database: TestDatabase;
let s3: TestS3;
let plane: TestControlPlane;
let front: Server;

beforeAll(async () => {
  database = await createTestDatabase();
  await resetTables(database.db);
});
afterAll(async () => {
  await database.close();
});
afterEach(async () => {
  front.closeAllConnections();
  front.close();
  await once(front, 'close');
  await plane.close();
  await s3.close();
});

/** When a presigned URL stops being valid (X-Amz-Date + X-Amz-Expires), in ms. */
function expiryOf(url: URL): number {
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const signedAt = Date.parse(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  return signedAt + Number(url.searchParams.get('X-Amz-Expires')) * 1000;
}

/**
 * A front before the test S3 whose first upload PUT is slow: it answers 503 SlowDown only
 * once its URL has expired. Everything else is forwarded as sent.
 */
async function slowFirstUpload(): Promise<string> {
  const target = new URL(s3.endpoint);
  let slowed = false;
  front = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', target);
      if (!slowed && request.method === 'PUT' && url.pathname.includes('/uploads/')) {
        slowed = true;
        request.resume();
        await waitFor('the upload URL to expire', () => Date.now() > expiryOf(url) + 1000, 10_000);
        response.writeHead(503, { 'content-type': 'application/xml' });
        response.end(
          '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
        );
        return;
      }
      forwardRequest(target, request, response);
    })();
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}

test('an upload retried after its presigned URL expired asks for a fresh URL, and succeeds', async () => {
  s3 = await startTestS3();
  const endpoint = await slowFirstUpload();
  plane = await startTestControlPlane({
    db: database.db,
    env: { ...s3.env, FLUKSIO_S3_ENDPOINT: endpoint, FLUKSIO_S3_URL_TTL: '1s' },
  });
  const held = await holdClaimedRun(plane, 'acme/models', 'box');
  const client = new ControlPlaneClient({
    url: plane.url,
    token: held.token,
    retries: 2,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 50,
  });
  const bytes = Buffer.from('weights\n');
  const digest = blobDigest(createHash('sha256').update(bytes).digest('hex'));

  expect(await client.putBlob(held.lease, digest, { bytes })).toEqual({ digest, size: bytes.length });
  expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, held)).status).toBe(200);
  expect(await s3.read(`sha256/${digest.slice('sha256:'.length)}`)).toEqual(bytes);
});
