import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { ProtocolMismatchError } from '../../client/control-plane-errors.js';
import { FLUKSIO_VERSION } from '../../core/fluksio-version.js';
import { blobDigest } from '../../schemas/blob-digest.js';
import { runners } from '../../schemas/tables/runners.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { forwardRequest } from '../helpers/forward-request.js';
import { makeRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { startRunner } from '../runner-daemon/helpers/runner-process.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from './control-plane-harness.js';
import { holdClaimedRun } from './hold-claimed-run.js';

let database: TestDatabase;
let plane: TestControlPlane;
const closers: (() => Promise<unknown>)[] = [];

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
  for (const close of closers.splice(0).reverse()) await close();
});

async function start(options: Omit<Parameters<typeof startTestControlPlane>[0], 'db'> = {}): Promise<void> {
  plane = await startTestControlPlane({ db: database.db, ...options });
  closers.push(() => plane.close());
}

/** One request as a front saw it on its way through. */
interface Seen {
  line: string;
  headers: IncomingHttpHeaders;
}

/**
 * An HTTP front before `upstream` that records every request it passes on, and passes
 * the answers back with the headers `answerHeaders` makes of them.
 */
async function startFront(
  upstream: string,
  answerHeaders?: (headers: IncomingHttpHeaders) => IncomingHttpHeaders,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const target = new URL(upstream);
  const server = createServer((request, response) => {
    seen.push({ line: `${request.method} ${request.url}`, headers: request.headers });
    forwardRequest(target, request, response, answerHeaders);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const clientOf = (url: string, token: string) =>
  new ControlPlaneClient({ url, token, retries: 3, minRetryDelayMs: 10, maxRetryDelayMs: 50 });

describe('the control plane and its clients name their protocol', () => {
  test('a client of a protocol older than the control plane answers gets 426 saying to upgrade the client, before its token is checked', async () => {
    await start();
    const refused = await plane.call('POST', '/api/v1/runner/claim', {
      json: { waitSeconds: 0 },
      headers: {
        'x-fluksio-protocol': '0',
        'user-agent': 'fluksio/0.0.9 (protocol 0; node v20.0.0; linux x64)',
      },
    });
    expect(refused.status).toBe(426);
    expect(refused.json).toEqual({
      error: `X-Fluksio-Protocol: this client speaks fluksio protocol 0 (fluksio 0.0.9), and this control plane (fluksio ${FLUKSIO_VERSION}) answers protocol 1: upgrade the client (the runner, the fluksio CLI or the action) to fluksio ${FLUKSIO_VERSION}`,
      field: 'X-Fluksio-Protocol',
    });
    expect(refused.headers.get('x-fluksio-protocol')).toBe('1');
  });

  test('a client newer than the control plane gets 426 saying to upgrade the control plane first; a malformed header is a 400', async () => {
    await start();
    const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
    const newer = await plane.call('GET', '/api/v1/runs', {
      token: submitter,
      headers: {
        'x-fluksio-protocol': '2',
        'user-agent': 'fluksio/9.0.0 (protocol 2; node v24.0.0; linux x64)',
      },
    });
    expect(newer.status).toBe(426);
    expect(newer.json.error).toBe(
      `X-Fluksio-Protocol: this client speaks fluksio protocol 2 (fluksio 9.0.0), newer than this control plane (fluksio ${FLUKSIO_VERSION}) answers protocol 1: upgrade the control plane (fluksio app) first, to fluksio 9.0.0; it goes on answering older clients`,
    );
    const malformed = await plane.call('GET', '/api/v1/runs', {
      token: submitter,
      headers: { 'x-fluksio-protocol': 'v1' },
    });
    expect(malformed).toMatchObject({ status: 400, json: { field: 'X-Fluksio-Protocol' } });
  });

  test('a request without the header is answered as ever (older clients, curl), and every answer names the protocol', async () => {
    await start();
    const runner = await plane.addRunner({ name: 'box' });
    const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
    expect((await plane.submit(submitter, {})).status).toBe(201);
    const claim = await plane.call('POST', '/api/v1/runner/claim', {
      token: runner.token,
      json: { waitSeconds: 0 },
    });
    expect(claim.status).toBe(200);
    expect(claim.headers.get('x-fluksio-protocol')).toBe('1');
    const unknown = await plane.call('GET', '/api/v1/nothing-here', { token: submitter });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-fluksio-protocol')).toBe('1');
    // Only fluksio's clients are asked for a protocol: not GitHub's webhooks, not the probes.
    const webhook = await plane.call('POST', '/api/github/webhooks', {
      headers: { 'x-fluksio-protocol': '0' },
    });
    expect(webhook.status).not.toBe(426);
    expect((await plane.call('GET', '/healthz', { headers: { 'x-fluksio-protocol': '0' } })).status).toBe(
      200,
    );
  });

  test('the client against a control plane that dropped its protocol: a ProtocolMismatchError, asked once', async () => {
    await start({ protocols: { min: 2, current: 2 } });
    const runner = await plane.addRunner({ name: 'box' });
    const front = await startFront(plane.url);
    const claiming = clientOf(front.url, runner.token).claim(0, false);
    await expect(claiming).rejects.toBeInstanceOf(ProtocolMismatchError);
    await expect(claiming).rejects.toThrow(
      `The control plane answered 426 to POST /api/v1/runner/claim: X-Fluksio-Protocol: this client speaks fluksio protocol 1 (fluksio ${FLUKSIO_VERSION}), and this control plane (fluksio ${FLUKSIO_VERSION}) answers protocol 2: upgrade the client`,
    );
    expect(front.seen.map((request) => request.line)).toEqual(['POST /api/v1/runner/claim']);
  });

  test('the client against an older control plane: a ProtocolMismatchError saying to upgrade it, asked once', async () => {
    await start({ protocols: { min: 0, current: 0 } });
    const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
    const refused = clientOf(plane.url, submitter).listRuns({ limit: 10 });
    await expect(refused).rejects.toBeInstanceOf(ProtocolMismatchError);
    await expect(refused).rejects.toThrow(
      /newer than this control plane .* answers protocol 0: upgrade the control plane \(fluksio app\) first/,
    );

    // An older control plane that answers anyway (its answer names protocol 0): not read as this protocol.
    await plane.close();
    closers.pop();
    await start();
    const token = await plane.addApiToken({ repositories: ['acme/model'] });
    const front = await startFront(plane.url, (headers) => ({ ...headers, 'x-fluksio-protocol': '0' }));
    const misread = clientOf(front.url, token).listRuns({ limit: 10 });
    await expect(misread).rejects.toBeInstanceOf(ProtocolMismatchError);
    await expect(misread).rejects.toThrow(
      `The control plane at ${front.url} speaks fluksio protocol 0, older than protocol 1 of this fluksio ${FLUKSIO_VERSION} (GET /api/v1/runs?limit=10): upgrade the control plane (fluksio app) to fluksio ${FLUKSIO_VERSION} or later`,
    );
    expect(front.seen).toHaveLength(1);
  });

  test('the version a runner names is kept on its row, written again at once when it changes, and fluksio runners shows it', async () => {
    await start();
    const runner = await plane.addRunner({ name: 'box' });
    const versionOf = async (): Promise<string | null> => {
      const [row] = await database.db
        .select({ version: runners.version })
        .from(runners)
        .where(eq(runners.id, runner.row.id));
      return row?.version ?? null;
    };
    expect(await versionOf()).toBeNull();
    // fluksio's own client, as the runner daemon claims.
    expect(await clientOf(plane.url, runner.token).claim(0, false)).toBeNull();
    expect(await versionOf()).toBe(FLUKSIO_VERSION);
    // Restarted on another version within the same second: written at once, not a second later.
    const claimAs = (userAgent: string) =>
      plane.call('POST', '/api/v1/runner/claim', {
        token: runner.token,
        json: { waitSeconds: 0 },
        headers: { 'user-agent': userAgent },
      });
    expect((await claimAs('fluksio/0.2.0 (protocol 1; node v22.11.0; linux x64)')).status).toBe(204);
    expect(await versionOf()).toBe('0.2.0');
    // A request that names no fluksio version (curl with the runner's token) leaves it.
    expect((await claimAs('curl/8.5.0')).status).toBe(204);
    expect(await versionOf()).toBe('0.2.0');
    expect((await claimAs('fluksio/0.2.1 (protocol 1; node v22.11.0; linux x64)')).status).toBe(204);

    const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-runners-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const env = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: dir };
    const listed = spawnFluksio(['runners', '--json'], { cwd: dir, env });
    expect(await listed.exited, listed.output()).toBe(0);
    expect(JSON.parse(listed.output())).toEqual([expect.objectContaining({ name: 'box', version: '0.2.1' })]);
    const table = spawnFluksio(['runners'], { cwd: dir, env });
    expect(await table.exited, table.output()).toBe(0);
    expect(table.output()).toMatch(/^name\s+owner\s+repositories\s+labels\s+last seen\s+version\s*$/m);
    expect(table.output()).toMatch(/^box\s+acme\s+.*\s0\.2\.1\s*$/m);
  });

  test('X-Fluksio-Protocol and User-Agent go to the control plane with every request, and never to the blob store', async () => {
    const s3: TestS3 = await startTestS3();
    closers.push(() => s3.close());
    const store = await startFront(s3.endpoint);
    await start({ env: { ...s3.env, FLUKSIO_S3_ENDPOINT: store.url } });
    const held = await holdClaimedRun(plane, 'acme/models', 'box');
    const front = await startFront(plane.url);
    const client = clientOf(front.url, held.token);
    const bytes = Buffer.from('weights\n');
    const digest = blobDigest(createHash('sha256').update(bytes).digest('hex'));

    await client.putBlob(held.lease, digest, { bytes });
    expect(await client.getBlob(held.lease, digest, (body) => text(body))).toBe('weights\n');

    expect(front.seen.map((request) => request.line)).toEqual([
      `POST /api/v1/blobs/${digest}/uploads`,
      expect.stringMatching(new RegExp(`^POST /api/v1/blobs/${digest}/uploads/`)),
      `GET /api/v1/blobs/${digest}`,
    ]);
    for (const { headers } of front.seen) {
      expect(headers['x-fluksio-protocol']).toBe('1');
      expect(headers['user-agent']).toMatch(
        new RegExp(`^fluksio/${FLUKSIO_VERSION.replaceAll('.', '\\.')} \\(protocol 1; node v`),
      );
    }
    // The client's requests to the store are the presigned ones (the control plane's own go there too).
    const presigned = store.seen.filter((request) => request.line.includes('X-Amz-Signature='));
    expect(presigned.map((request) => request.line.split(' ')[0])).toEqual(['PUT', 'GET']);
    for (const { headers } of store.seen) expect(headers['x-fluksio-protocol']).toBeUndefined();
    for (const { headers } of presigned) expect(headers.authorization).toBeUndefined();
  });
});

describe('the runner and fluksio submit stop at a control plane of another protocol', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'fluksio-protocol-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
  });

  test('the runner daemon stops with the message and exit 1 instead of claiming again', async () => {
    await start({ protocols: { min: 2, current: 2 } });
    const runner = await plane.addRunner({ name: 'box' });
    await writeFile(path.join(dir, 'token'), `${runner.token}\n`);
    const process = startRunner(
      { workDir: path.join(dir, 'work'), tokenFile: path.join(dir, 'token'), url: plane.url },
      {},
    );
    closers.push(() => process.stop('SIGKILL'));
    expect(await process.exited).toBe(1);
    expect(process.output()).toContain(
      `fluksio: The control plane answered 426 to POST /api/v1/runner/claim: X-Fluksio-Protocol: this client speaks fluksio protocol 1 (fluksio ${FLUKSIO_VERSION}), and this control plane (fluksio ${FLUKSIO_VERSION}) answers protocol 2: upgrade the client`,
    );
    expect(process.output()).not.toContain(runner.token);
  });

  test('fluksio submit prints the message and exits 1', async () => {
    await start({ protocols: { min: 0, current: 0 } });
    const token = await plane.addApiToken({ repositories: ['acme/model'] });
    const repo = await makeRepo({
      files: { 'fluksio.yml': 'version: 1\nstages:\n  train:\n    cmd: echo hi\n' },
    });
    closers.push(() => repo.cleanup());
    await repo.git('remote', 'add', 'origin', repo.dir);
    await repo.git('fetch', '-q', 'origin');
    const submit = spawnFluksio(['submit'], {
      cwd: repo.dir,
      env: { FLUKSIO_URL: plane.url, FLUKSIO_TOKEN: token },
    });
    expect(await submit.exited).toBe(1);
    expect(submit.output()).toMatch(
      /^fluksio: The control plane answered 426 to POST \/api\/v1\/runs: X-Fluksio-Protocol: this client speaks fluksio protocol 1 .* answers protocol 0: upgrade the control plane \(fluksio app\) first/m,
    );
  });
});
