import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readControlPlaneSettings } from '../../app/control-plane-settings.js';
import { startControlPlane } from '../../app/start-control-plane.js';
import { forwardRequest } from '../helpers/forward-request.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3 } from '../helpers/s3-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { removeKeys, TEST_REDIS_URL, testPrefix } from './control-plane-harness.js';

let database: TestDatabase;
let dataDir: string;
const prefixes: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'fluksio-app-start-'));
});
afterAll(async () => {
  const redis = new Redis(TEST_REDIS_URL);
  for (const prefix of prefixes) await removeKeys(redis, prefix);
  await redis.quit();
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A pino logger whose lines are kept for the test to read. */
function capturingLogger(): { logger: pino.Logger; lines: () => string } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines: () => text };
}

function settingsFor(env: Record<string, string>) {
  const prefix = testPrefix();
  prefixes.push(prefix);
  return readControlPlaneSettings({
    REDIS_URL: TEST_REDIS_URL,
    FLUKSIO_QUEUE_PREFIX: prefix,
    FLUKSIO_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    ...env,
  });
}

describe('startControlPlane', () => {
  test('runs on PostgreSQL without any GitHub credentials, and closes everything', async () => {
    const { logger } = capturingLogger();
    const plane = await startControlPlane({ settings: settingsFor({ DATABASE_URL: database.url }), logger });
    expect(plane.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ready = await fetch(`${plane.url}/readyz`);
    expect(ready.status).toBe(200);
    await plane.close();
    await expect(fetch(`${plane.url}/healthz`)).rejects.toThrow();
  });

  test('without DATABASE_URL it keeps an embedded PGlite database under the data dir, and says so', async () => {
    const { logger, lines } = capturingLogger();
    const plane = await startControlPlane({ settings: settingsFor({}), logger });
    try {
      expect((await fetch(`${plane.url}/readyz`)).status).toBe(200);
      expect(lines()).toMatch(/No DATABASE_URL: using an embedded PGlite database/);
      expect(existsSync(path.join(dataDir, 'database', 'PG_VERSION'))).toBe(true);
    } finally {
      await plane.close();
    }
  });

  test('an unreachable Redis fails the start with a sentence, and leaves nothing open', async () => {
    const { logger } = capturingLogger();
    const settings = settingsFor({ REDIS_URL: 'redis://127.0.0.1:1' });
    await expect(startControlPlane({ settings, logger })).rejects.toThrow(/Cannot reach Redis at REDIS_URL/);
    // The embedded database was closed, so its directory can be opened again at once.
    const plane = await startControlPlane({ settings: settingsFor({}), logger });
    await plane.close();
  });

  test('a bucket that does not exist fails the start with a sentence naming it, its endpoint and FLUKSIO_S3_BUCKET', async () => {
    const s3 = await startTestS3();
    try {
      const { logger } = capturingLogger();
      const settings = settingsFor({
        DATABASE_URL: database.url,
        ...s3.env,
        FLUKSIO_S3_BUCKET: 'no-such-bucket-41c7',
      });
      const started = startControlPlane({ settings, logger });
      await expect(started).rejects.toThrow(/Cannot use the blob store s3:\/\/no-such-bucket-41c7/);
      await expect(started).rejects.toThrow(s3.endpoint);
      await expect(started).rejects.toThrow(/FLUKSIO_S3_BUCKET/);
    } finally {
      await s3.close();
    }
  });

  test('/readyz is 503 naming the blob store while the bucket is unreachable, and 200 again once it is back; /healthz stays 200', async () => {
    const s3 = await startTestS3();
    const gate = await startGate(s3.endpoint);
    const { logger } = capturingLogger();
    const plane = await startControlPlane({
      settings: settingsFor({ DATABASE_URL: database.url, ...s3.env, FLUKSIO_S3_ENDPOINT: gate.endpoint }),
      logger,
    });
    try {
      const ready = await fetch(`${plane.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ok: true, blobs: 'ok' });

      await gate.stop();
      const down = await fetch(`${plane.url}/readyz`);
      expect(down.status).toBe(503);
      const body = (await down.json()) as { error: string; blobs: string; postgres: string; redis: string };
      expect(body).toMatchObject({ postgres: 'ok', redis: 'ok' });
      expect(body.error).toContain(`cannot reach the blob store s3://${s3.bucket}`);
      expect(body.blobs).not.toBe('ok');
      expect((await fetch(`${plane.url}/healthz`)).status).toBe(200);

      await gate.resume();
      await waitFor('/readyz to answer 200', async () => (await fetch(`${plane.url}/readyz`)).status === 200);
    } finally {
      await plane.close();
      await gate.stop();
      await s3.close();
    }
  });
});

/** An HTTP front before the test S3 that can be stopped (nothing listens) and resumed on the same port. */
async function startGate(
  upstream: string,
): Promise<{ endpoint: string; stop(): Promise<void>; resume(): Promise<void> }> {
  const target = new URL(upstream);
  const server = createServer((request, response) => forwardRequest(target, request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      if (!server.listening) return;
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
    async resume() {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
  };
}
