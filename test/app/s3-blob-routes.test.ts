import { createHash } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';
import { holdClaimedRun, type HeldRun } from './hold-claimed-run.js';

let database: TestDatabase;
let s3: TestS3;
let plane: TestControlPlane;

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
  await s3.close();
});

async function start(env: Record<string, string> = {}): Promise<void> {
  plane = await startTestControlPlane({ db: database.db, env: { ...s3.env, ...env } });
}

function digestOf(bytes: string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

const holding = (repository: string, name: string): Promise<HeldRun> =>
  holdClaimedRun(plane, repository, name);

/**
 * Asks for an upload URL, PUTs `bytes` there, and finishes the upload announcing `size`:
 * the store's answer to the PUT, and the control plane's to the finish.
 */
async function upload(
  runner: HeldRun,
  digest: string,
  bytes: string,
  size = Buffer.byteLength(bytes),
): Promise<{ put: number; status: number; json: Record<string, unknown>; uploadId: string }> {
  const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, { ...runner, json: { size } });
  expect(ticket.status, ticket.text).toBe(201);
  const { url, headers, uploadId } = ticket.json as {
    url: string;
    headers: Record<string, string>;
    uploadId: string;
  };
  expect(new URL(url).origin).toBe(s3.endpoint);
  // Only the ticket's headers go to the store: no token.
  const put = await fetch(url, {
    method: 'PUT',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(bytes)) },
    body: bytes,
  });
  const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
    ...runner,
    json: { size },
  });
  return { put: put.status, status: finish.status, json: finish.json, uploadId };
}

// Each behaviour with a store that keeps no checksums (s3rver alone) and with one that keeps
// and verifies them as AWS S3 does (s3rver behind the checksum front).
describe.each([{ checksums: false }, { checksums: true }])(
  'blobs in S3 (checksums: $checksums)',
  ({ checksums }) => {
    beforeEach(async () => {
      s3 = await startTestS3({ checksums });
    });

    test('an upload goes to a presigned URL and a read is sent to one: no byte passes through the control plane', async () => {
      await start();
      const runner = await holding('acme/model', 'box');
      const digest = digestOf('model weights');
      const stored = await upload(runner, digest, 'model weights');
      expect(stored).toMatchObject({ put: 200, status: 201, json: { digest, size: 13 } });
      expect(await s3.keys()).toEqual([`sha256/${digest.slice(7)}`]);

      const head = await plane.call('HEAD', `/api/v1/blobs/${digest}`, runner);
      expect(head.headers.get('content-length')).toBe('13');
      const get = await fetch(`${plane.url}/api/v1/blobs/${digest}`, {
        headers: { authorization: `Bearer ${runner.token}`, ...runner.headers },
        redirect: 'manual',
      });
      expect(get.status).toBe(307);
      const location = get.headers.get('location') ?? '';
      expect(new URL(location).origin).toBe(s3.endpoint);
      expect(await (await fetch(location)).text()).toBe('model weights');
      const metrics = (await plane.call('GET', '/metrics')).text;
      expect(metrics).toMatch(/^fluksio_blob_bytes_total\{direction="in"\} 0$/m);
      expect(metrics).toMatch(/^fluksio_blob_bytes_total\{direction="out"\} 0$/m);

      // Uploading through the control plane is refused, saying where to go instead.
      const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, { ...runner, body: 'model weights' });
      expect(put.status).toBe(409);
      expect(put.json.error).toContain(`POST /api/v1/blobs/${digest}/uploads`);
    });

    test('an upload of another size than announced is refused and leaves nothing', async () => {
      await start();
      const runner = await holding('acme/model', 'box');
      const digest = digestOf('weights');
      const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, {
        ...runner,
        json: { size: 7 },
      });
      const { uploadId } = ticket.json as { uploadId: string };
      const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
        ...runner,
        json: { size: 7 },
      });
      expect(finish).toMatchObject({ status: 400, json: { field: 'uploadId' } });
      expect(finish.json.error).toContain('nothing was uploaded');
      // Its length is signed: S3 refuses the PUT (s3rver checks no signature; then the finish does).
      const short = await upload(runner, digest, 'weigh', 7);
      expect(short.put).toBe(checksums ? 403 : 200);
      expect(short.status).toBe(400);
      expect(await s3.keys()).toEqual([]);
      expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, runner)).status).toBe(404);
    });

    test("knowing a digest opens nothing: another repository's run must upload the bytes itself", async () => {
      await start();
      const mine = await holding('acme/model', 'box');
      const digest = digestOf('secret weights');
      expect((await upload(mine, digest, 'secret weights')).status).toBe(201);
      const theirs = await holding('globex/model', 'their-box');
      expect((await plane.call('GET', `/api/v1/blobs/${digest}`, theirs)).status).toBe(404);
      // Finishing an upload never made, for a blob that exists, proves nothing.
      const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, {
        ...theirs,
        json: { size: 14 },
      });
      const { uploadId } = ticket.json as { uploadId: string };
      const claimed = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
        ...theirs,
        json: { size: 14 },
      });
      expect(claimed.status).toBe(400);
      expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, theirs)).status).toBe(404);
    });

    test('a finish retried after its answer was lost is answered as the first', async () => {
      await start();
      const runner = await holding('acme/model', 'box');
      const digest = digestOf('weights');
      const first = await upload(runner, digest, 'weights');
      expect(first.status).toBe(201);
      const again = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${first.uploadId}`, {
        ...runner,
        json: { size: 7 },
      });
      expect(again).toMatchObject({ status: 201, json: { digest, size: 7 } });
    });

    test('upload requests need the run lease, a size within the limit and a well-formed upload id', async () => {
      await start({ FLUKSIO_MAX_BLOB_SIZE: '1KiB' });
      const runner = await holding('acme/model', 'box');
      const digest = digestOf('x');
      const uploads = `/api/v1/blobs/${digest}/uploads`;
      expect((await plane.call('POST', uploads, { headers: runner.headers, json: { size: 1 } })).status).toBe(
        401,
      );
      const stale = { ...runner.headers, 'x-fluksio-lease': 'e'.repeat(64) };
      expect(
        (await plane.call('POST', uploads, { token: runner.token, headers: stale, json: { size: 1 } }))
          .status,
      ).toBe(409);
      expect((await plane.call('POST', uploads, { ...runner, json: { size: 4096 } })).status).toBe(413);
      expect(await plane.call('POST', uploads, { ...runner, json: { size: -1 } })).toMatchObject({
        status: 400,
        json: { field: 'size' },
      });
      expect(
        await plane.call('POST', `${uploads}/not-a-uuid`, { ...runner, json: { size: 1 } }),
      ).toMatchObject({
        status: 400,
        json: { field: 'uploadId' },
      });
    });
  },
);

test('a store that keeps no SHA-256 checksum is refused while checksums are verified', async () => {
  s3 = await startTestS3();
  await start({ FLUKSIO_S3_VERIFY_CHECKSUMS: 'true' });
  const runner = await holding('acme/model', 'box');
  const digest = digestOf('weights');
  const refused = await upload(runner, digest, 'weights');
  expect(refused.status).toBe(400);
  expect(refused.json.error).toContain('FLUKSIO_S3_VERIFY_CHECKSUMS=false');
  expect(await s3.keys()).toEqual([]);
});

test('a directory store tells the runner to PUT through the control plane', async () => {
  s3 = await startTestS3();
  plane = await startTestControlPlane({ db: database.db });
  const runner = await holding('acme/model', 'box');
  const ticket = await plane.call('POST', `/api/v1/blobs/${digestOf('x')}/uploads`, {
    ...runner,
    json: { size: 1 },
  });
  expect(ticket).toMatchObject({ status: 200, json: { via: 'control-plane' } });
});

test("on a store that keeps no checksum, another repository's runner knowing a digest and its size neither replaces the blob nor gains a way to read it", async () => {
  s3 = await startTestS3();
  await start();
  const mine = await holding('acme/model', 'box');
  const digest = digestOf('secret weights');
  expect((await upload(mine, digest, 'secret weights')).status).toBe(201);

  // Bytes of the same size under that digest: s3rver keeps no checksum to refuse them.
  const theirs = await holding('globex/model', 'their-box');
  const lie = await upload(theirs, digest, 'XXXXXXXXXXXXXX');
  expect(lie.put).toBe(200);
  expect(lie.status).toBe(400);
  expect(lie.json.error).toContain(digest);
  expect((await s3.read(`sha256/${digest.slice(7)}`))?.toString()).toBe('secret weights');
  expect(await s3.keys('uploads/')).toEqual([]);
  expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, theirs)).status).toBe(404);

  // Uploading the real bytes still proves having them.
  expect((await upload(theirs, digest, 'secret weights')).status).toBe(201);
  expect((await plane.call('HEAD', `/api/v1/blobs/${digest}`, theirs)).status).toBe(200);
});

test('on a store that keeps no checksum, bytes a runner PUTs again to its URL while its upload is being verified never reach the blob', async () => {
  s3 = await startTestS3();
  // Between the store and the control plane: right after the control plane first reads an
  // upload's bytes (a GET, or a copy from it), the runner's URL — valid until it expires —
  // takes other bytes of the same size, as a runner racing its own finish would send them.
  const swapped: string[] = [];
  const race = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://front').pathname);
      const copied = request.headers['x-amz-copy-source'];
      const source = typeof copied === 'string' ? `/${decodeURIComponent(copied).replace(/^\//, '')}` : null;
      const read = request.method === 'GET' ? path : source;
      const upload = read !== null && /\/uploads\/[^/]+\/[0-9a-f-]{36}$/.test(read) ? read : null;
      const upstream = httpRequest(
        `${s3.endpoint}${request.url ?? '/'}`,
        { method: request.method, headers: request.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            const reply = (): void => {
              response.writeHead(answer.statusCode ?? 502, answer.headers);
              response.end(Buffer.concat(body));
            };
            if (upload === null || swapped.includes(upload)) return reply();
            swapped.push(upload);
            const put = httpRequest(`${s3.endpoint}${upload}`, { method: 'PUT' }, (done) => {
              done.resume();
              done.on('end', reply);
            });
            put.end('XXXXXXXXXXXXXX');
          });
        },
      );
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((listening) => race.listen(0, '127.0.0.1', listening));
  try {
    const front = `http://127.0.0.1:${(race.address() as AddressInfo).port}`;
    await start({ FLUKSIO_S3_ENDPOINT: front });
    const runner = await holding('acme/model', 'box');
    const digest = digestOf('secret weights');
    const ticket = await plane.call('POST', `/api/v1/blobs/${digest}/uploads`, {
      ...runner,
      json: { size: 14 },
    });
    const { url, headers, uploadId } = ticket.json as {
      url: string;
      headers: Record<string, string>;
      uploadId: string;
    };
    expect((await fetch(url, { method: 'PUT', headers, body: 'secret weights' })).status).toBe(200);
    const finish = await plane.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
      ...runner,
      json: { size: 14 },
    });
    expect(finish.status, finish.text).toBe(201);
    expect(swapped).toHaveLength(1);
    expect((await s3.read(`sha256/${digest.slice(7)}`))?.toString()).toBe('secret weights');
    expect(await s3.keys('uploads/')).toEqual([]);
  } finally {
    await new Promise((closed) => race.close(closed));
  }
});
