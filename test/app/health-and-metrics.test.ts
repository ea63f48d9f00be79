import { drizzle } from 'drizzle-orm/postgres-js';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import * as tables from '../../schemas/tables/index.js';
import { waitFor } from '../app-github/github-app-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { resetTables, startTestControlPlane } from './control-plane-harness.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
});

/** A Redis client that can never connect, and fails at once instead of queueing commands. */
function unreachableRedis(): Redis {
  const redis = new Redis({
    host: '127.0.0.1',
    port: 1,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  return redis;
}

describe('health', () => {
  test('/healthz and /readyz answer without credentials when Postgres and Redis are reachable', async () => {
    const plane = await startTestControlPlane({ db: database.db });
    try {
      expect(await plane.call('GET', '/healthz')).toMatchObject({ status: 200, json: { ok: true } });
      expect(await plane.call('GET', '/readyz')).toMatchObject({
        status: 200,
        json: { ok: true, postgres: 'ok', redis: 'ok' },
      });
    } finally {
      await plane.close();
    }
  });

  test('/readyz is 503 naming Redis when Redis is unreachable, while /healthz stays 200', async () => {
    const redis = unreachableRedis();
    const plane = await startTestControlPlane({ db: database.db, redis });
    try {
      const ready = await plane.call('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({
        postgres: 'ok',
        error: expect.stringMatching(/cannot reach Redis/),
      });
      expect((await plane.call('GET', '/healthz')).status).toBe(200);
    } finally {
      await plane.close();
      redis.disconnect();
    }
  });

  test('/readyz is 503 naming Postgres when Postgres is unreachable', async () => {
    const client = postgres('postgres://postgres@127.0.0.1:1/nothing', {
      max: 1,
      connect_timeout: 1,
      onnotice: () => {},
    });
    const plane = await startTestControlPlane({ db: drizzle({ client, schema: tables }) });
    try {
      const ready = await plane.call('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({
        redis: 'ok',
        error: expect.stringMatching(/cannot reach Postgres/),
      });
    } finally {
      await plane.close();
      await client.end();
    }
  });
});

describe('Prometheus metrics', () => {
  test('GET /metrics reports queue depth per label set, runs by state and runners online', async () => {
    const plane = await startTestControlPlane({ db: database.db });
    try {
      const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
      await plane.submit(submitter, { labels: ['gpu', 'a100'] });
      await plane.submit(submitter, { labels: ['a100', 'gpu'] });
      await plane.submit(submitter, { labels: ['cpu'] });
      const cpu = await plane.addRunner({ name: 'cpu-box', labels: ['cpu'] });
      await plane.addRunner({ name: 'never-seen', labels: ['gpu'] });
      expect(await plane.claim(cpu.token)).not.toBeNull();

      const scrape = await plane.call('GET', '/metrics');
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(scrape.text).toContain('# TYPE fluksio_queue_depth gauge');
      expect(scrape.text).toContain('fluksio_queue_depth{labels="a100,gpu"} 2');
      expect(scrape.text).not.toContain('fluksio_queue_depth{labels="cpu"}');
      expect(scrape.text).toContain('fluksio_runs{status="queued"} 2');
      expect(scrape.text).toContain('fluksio_runs{status="running"} 1');
      expect(scrape.text).toContain('fluksio_runners_online 1');
    } finally {
      await plane.close();
    }
  });

  test('GET /metrics counts the claims parked in this process: one while a runner waits, none once a run reached it', async () => {
    const plane = await startTestControlPlane({ db: database.db });
    try {
      const parked = async (): Promise<string | undefined> =>
        /^fluksio_claims_parked (\d+)$/m.exec((await plane.call('GET', '/metrics')).text)?.[1];
      expect(await parked()).toBe('0');
      const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
      const runner = await plane.addRunner({ name: 'idle-box', labels: [] });
      const waiting = plane.claim(runner.token, 30);
      await waitFor('the claim to park', async () => (await parked()) === '1');
      const queued = await plane.submit(submitter, {});
      const claimed = await waiting;
      expect(claimed?.run.id).toBe((queued.json.run as { id: string }).id);
      expect(await parked()).toBe('0');
    } finally {
      await plane.close();
    }
  });

  test('with FLUKSIO_METRICS_TOKEN set, a scrape must bear it', async () => {
    const plane = await startTestControlPlane({
      db: database.db,
      env: { FLUKSIO_METRICS_TOKEN: 's3cret-scrape' },
    });
    try {
      expect((await plane.call('GET', '/metrics')).status).toBe(401);
      expect((await plane.call('GET', '/metrics', { token: 'guess' })).status).toBe(401);
      const scrape = await plane.call('GET', '/metrics', { token: 's3cret-scrape' });
      expect(scrape.status).toBe(200);
      expect(scrape.text).toContain('fluksio_runners_online 0');
      expect((await plane.call('GET', '/healthz')).status).toBe(200);
    } finally {
      await plane.close();
    }
  });
});
