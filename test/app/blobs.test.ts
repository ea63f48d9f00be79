import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { RemoteBlobStore } from '../../runner/daemon/remote-blob-store.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';

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
  plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_MAX_BLOB_SIZE: '1KiB' } });
});
afterEach(async () => {
  await plane.close();
});

function digestOf(bytes: string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A runner holding a claimed run of `repository`. */
async function holding(repository: string, name: string): Promise<{ token: string; claim: Claim }> {
  const submitter = await plane.addApiToken({ repositories: [repository] });
  const runner = await plane.addRunner({ name, owner: repository.split('/')[0] });
  expect((await plane.submit(submitter, { repository })).status).toBe(201);
  const claim = await plane.claim(runner.token);
  if (!claim) throw new Error('nothing claimed');
  return { token: runner.token, claim };
}

function leaseHeaders(claim: Claim): Record<string, string> {
  return { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id };
}

/** Every file under the blob directory, temporary ones included. */
async function storedFiles(): Promise<string[]> {
  const entries = await readdir(plane.blobsRoot, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe('blobs', () => {
  test('an upload is verified, stored and read back by the run that holds it', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('model weights');
    expect(
      (await plane.call('HEAD', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) })).status,
    ).toBe(404);

    const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token,
      headers: { ...leaseHeaders(claim), 'content-type': 'application/octet-stream' },
      body: 'model weights',
    });
    expect(put).toMatchObject({ status: 201, json: { digest, size: 13 } });

    const head = await plane.call('HEAD', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('13');
    const get = await plane.call('GET', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) });
    expect(get).toMatchObject({ status: 200, text: 'model weights' });
  });

  test('an empty blob is a blob like any other', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('');
    const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token,
      headers: leaseHeaders(claim),
      body: '',
    });
    expect(put).toMatchObject({ status: 201, json: { digest, size: 0 } });
    expect(
      await plane.call('GET', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) }),
    ).toMatchObject({
      status: 200,
      text: '',
    });
  });

  test('an upload whose bytes do not match its digest is 400 and stores nothing', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('what was promised');
    const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token,
      headers: leaseHeaders(claim),
      body: 'something else',
    });
    expect(put.status).toBe(400);
    expect(put.json).toMatchObject({
      field: 'digest',
      error: expect.stringContaining(digestOf('something else')),
    });
    expect(
      (await plane.call('HEAD', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) })).status,
    ).toBe(404);
    expect(await storedFiles()).toEqual([]);
  });

  test('an upload over the size limit is 413 and stores nothing', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const big = 'x'.repeat(2048);
    const put = await plane.call('PUT', `/api/v1/blobs/${digestOf(big)}`, {
      token,
      headers: leaseHeaders(claim),
      body: big,
    });
    expect(put.status).toBe(413);
    expect(await storedFiles()).toEqual([]);
  });

  test("another repository's run cannot read a blob it never uploaded, even knowing its digest", async () => {
    const mine = await holding('acme/model', 'box');
    const digest = digestOf('secret weights');
    await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token: mine.token,
      headers: leaseHeaders(mine.claim),
      body: 'secret weights',
    });

    const theirs = await holding('globex/model', 'their-box');
    const headers = leaseHeaders(theirs.claim);
    expect(
      (await plane.call('HEAD', `/api/v1/blobs/${digest}`, { token: theirs.token, headers })).status,
    ).toBe(404);
    expect(
      (await plane.call('GET', `/api/v1/blobs/${digest}`, { token: theirs.token, headers })).status,
    ).toBe(404);
    // Uploading the very bytes proves it has them: then it may read them.
    const put = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token: theirs.token,
      headers,
      body: 'secret weights',
    });
    expect(put.status).toBe(201);
    expect((await plane.call('GET', `/api/v1/blobs/${digest}`, { token: theirs.token, headers })).text).toBe(
      'secret weights',
    );
  });

  test("a submitter's read token downloads its repositories' blobs (fluksio pull), no others", async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('outputs');
    await plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token,
      headers: leaseHeaders(claim),
      body: 'outputs',
    });
    const reader = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
    const outsider = await plane.addApiToken({ repositories: ['acme/other'], scope: 'read' });
    const run = { 'x-fluksio-run': claim.run.id };
    expect(await plane.call('GET', `/api/v1/blobs/${digest}`, { token: reader, headers: run })).toMatchObject(
      {
        status: 200,
        text: 'outputs',
      },
    );
    expect(
      (await plane.call('GET', `/api/v1/blobs/${digest}`, { token: outsider, headers: run })).status,
    ).toBe(404);
    const byQuery = `/api/v1/blobs/${digest}?run=${claim.run.id}`;
    expect(await plane.call('GET', byQuery, { token: reader })).toMatchObject({
      status: 200,
      text: 'outputs',
    });
    expect((await plane.call('GET', byQuery, { token: outsider })).status).toBe(404);
    // A submitter uploads nothing.
    expect(
      (await plane.call('PUT', `/api/v1/blobs/${digest}`, { token: reader, headers: run, body: 'outputs' }))
        .status,
    ).toBe(401);
  });

  test('a stored blob damaged on disk (same size) is replaced by the next verified upload of its bytes', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('model weights');
    const upload = async (): Promise<number> =>
      (
        await plane.call('PUT', `/api/v1/blobs/${digest}`, {
          token,
          headers: leaseHeaders(claim),
          body: 'model weights',
        })
      ).status;
    expect(await upload()).toBe(201);
    // A flipped byte (bit rot, a disk that lied): the size says nothing of it.
    const [file] = await storedFiles();
    if (file === undefined) throw new Error('the upload stored no file');
    await writeFile(file, 'model weightz');
    // The runner that found it corrupt on reading uploads it again: that must mend it.
    expect(await upload()).toBe(201);
    const get = await plane.call('GET', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) });
    expect(get).toMatchObject({ status: 200, text: 'model weights' });
    expect(await storedFiles()).toEqual([file]);
  });

  test('a blob held cut short (a crash while the control plane wrote it) is sent again by the next run that stores its bytes', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const scratch = await mkdtemp(path.join(tmpdir(), 'fluksio-blobs-'));
    try {
      const runnerStore = async (name: string) =>
        new RemoteBlobStore({
          client: new ControlPlaneClient({ url: plane.url, token }),
          run: { runId: claim.run.id, lease: claim.lease },
          cache: await LocalBlobCache.open({ root: path.join(scratch, name), maxBytes: 1 << 20 }),
        });
      const { digest } = await (await runnerStore('first')).putBytes(Buffer.from('model weights'));
      const [file] = await storedFiles();
      if (file === undefined) throw new Error('the upload stored no file');
      await writeFile(file, 'model');

      await (await runnerStore('second')).putBytes(Buffer.from('model weights'));
      const get = await plane.call('GET', `/api/v1/blobs/${digest}`, { token, headers: leaseHeaders(claim) });
      expect(get).toMatchObject({ status: 200, text: 'model weights' });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  test('blob requests need a token, a well-formed digest and a current lease', async () => {
    const { token, claim } = await holding('acme/model', 'box');
    const digest = digestOf('bytes');
    expect(
      (await plane.call('GET', `/api/v1/blobs/${digest}`, { headers: leaseHeaders(claim) })).status,
    ).toBe(401);
    expect(
      await plane.call('GET', '/api/v1/blobs/md5:abc', { token, headers: leaseHeaders(claim) }),
    ).toMatchObject({
      status: 400,
      json: { field: 'digest' },
    });
    const stale = { ...leaseHeaders(claim), 'x-fluksio-lease': 'e'.repeat(64) };
    expect(
      (await plane.call('PUT', `/api/v1/blobs/${digest}`, { token, headers: stale, body: 'bytes' })).status,
    ).toBe(409);
    const noRun = { 'x-fluksio-lease': claim.lease };
    expect(
      await plane.call('PUT', `/api/v1/blobs/${digest}`, { token, headers: noRun, body: 'bytes' }),
    ).toMatchObject({
      status: 400,
      json: { field: 'X-Fluksio-Run' },
    });
    expect(await storedFiles()).toEqual([]);
  });
});
