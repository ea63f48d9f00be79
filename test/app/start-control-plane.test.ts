import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readControlPlaneSettings } from '../../app/control-plane-settings.js';
import { startControlPlane } from '../../app/start-control-plane.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
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
});
