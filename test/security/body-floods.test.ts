import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { deliveries } from '../../schemas/tables/deliveries.js';
import { runs } from '../../schemas/tables/runs.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { sendWebhook } from '../github/send-webhook.js';
import { sharedTestAppCredentials } from '../github/test-app-credentials.js';
import { hostilePost, type HostileAnswer } from '../helpers/hostile-post.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

// Issue 9, item 1: anyone who can reach the control plane, with no credential, floods it
// with bodies of hundreds of megabytes. Each is answered at once, before its body is read
// (or once GitHub's 25 MB cap is crossed), nothing is stored, and the control plane's
// memory stays where it was.

const HUGE = 300 * 2 ** 20;
const { appId, privateKey, webhookSecret } = sharedTestAppCredentials();
const GITHUB_APP = {
  APP_ID: String(appId),
  PRIVATE_KEY: privateKey,
  WEBHOOK_SECRET: webhookSecret,
  FLUKSIO_ALLOWED_OWNERS: 'acme',
  // Nothing here reaches GitHub: no delivery of an allowed owner is ever stored.
  GITHUB_API_URL: 'http://127.0.0.1:9',
};
/** Headers a forger copies from a real delivery; the signature is of some other body. */
const FORGED = {
  'x-github-event': 'push',
  'x-github-delivery': randomUUID(),
  'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
};

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start(GITHUB_APP);
});
afterEach(async () => {
  await world.close();
});

/** The control plane process's resident memory, now and at its peak, in MiB. */
async function memoryOf(pid: number | undefined): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** The answer came before the body was all sent: the control plane did not wait to read it. */
function answeredUnread(answer: HostileAnswer): void {
  expect(answer.sent).toBeLessThan(HUGE);
}

describe('anyone on the network sends bodies of 300 MB', () => {
  test('to the webhook endpoint: without GitHub headers 400, forged ones 413, neither read nor stored', async () => {
    const url = `${world.app.url}/api/github/webhooks`;
    const before = await memoryOf(world.app.process.child.pid);
    const answers = await Promise.all([
      hostilePost({ url, bytes: HUGE }),
      hostilePost({ url, bytes: HUGE, chunked: true }),
      hostilePost({ url, bytes: HUGE, headers: FORGED }),
      hostilePost({ url, bytes: HUGE, headers: FORGED, chunked: true }),
      hostilePost({ url, bytes: HUGE, headers: FORGED, chunked: true }),
      hostilePost({ url, bytes: HUGE, headers: FORGED, chunked: true }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([
      400,
      400,
      413,
      expect.any(Number),
      expect.any(Number),
      expect.any(Number),
    ]);
    // Streamed without a length, a forged body is refused past 1 MiB (413), or sooner when
    // other unverified bodies already hold the budget (503).
    for (const answer of answers.slice(3)) expect([413, 503]).toContain(answer.status);
    for (const answer of answers) answeredUnread(answer);
    expect(JSON.parse(answers[0]?.body ?? '')).toEqual({
      error: 'X-GitHub-Event: is required (GitHub sends it with every delivery)',
      field: 'X-GitHub-Event',
    });
    expect(JSON.parse(answers[2]?.body ?? '').field).toBe('body');
    expect(await database.db.select().from(deliveries)).toEqual([]);

    // Six bodies of 300 MB read would be nearly two gigabytes; unverified bodies hold at most
    // GitHub's 25 MB between them.
    const after = await memoryOf(world.app.process.child.pid);
    expect(after.peak - before.rss).toBeLessThan(96);

    // GitHub's own deliveries still get through.
    const id = randomUUID();
    const delivered = await sendWebhook(
      url,
      { name: 'push', id, payload: { ref: 'refs/heads/main', repository: { owner: { login: 'stranger' } } } },
      webhookSecret,
    );
    expect(delivered.status).toBe(200);
    expect(await database.db.select().from(deliveries).where(eq(deliveries.id, id))).toHaveLength(1);
  });

  test('to the JSON API without a token: 401 before the body is read, for every route that takes one', async () => {
    const before = await memoryOf(world.app.process.child.pid);
    const paths = [
      '/api/v1/runs',
      '/api/v1/runner/claim',
      '/api/v1/runs/01JZ0000000000000000000000/events',
      '/api/v1/runs/01JZ0000000000000000000000/finish',
      '/api/v1/runs/01JZ0000000000000000000000/cancel',
    ];
    const answers = await Promise.all(
      paths.flatMap((path) => [
        hostilePost({ url: `${world.app.url}${path}`, bytes: HUGE }),
        hostilePost({ url: `${world.app.url}${path}`, bytes: HUGE, chunked: true }),
      ]),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body).field).toBe('Authorization');
      answeredUnread(answer);
    }
    const upload = await hostilePost({
      url: `${world.app.url}/api/v1/blobs/sha256:${'a'.repeat(64)}`,
      method: 'PUT',
      bytes: HUGE,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(upload.status).toBe(401);
    answeredUnread(upload);
    const after = await memoryOf(world.app.process.child.pid);
    expect(after.peak - before.rss).toBeLessThan(64);
    expect(await database.db.select().from(runs)).toEqual([]);
  });

  test("with a token, a body over its route's limit is 413 at once, declared or streamed", async () => {
    const { repository, commit, cloneUrl } = await world.repo({ 'fluksio.yml': 'version: 1\nstages: {}\n' });
    const token = await world.allow([repository]);
    const headers = { authorization: `Bearer ${token}`, 'idempotency-key': 'flood' };
    const url = `${world.app.url}/api/v1/runs`;
    for (const chunked of [false, true]) {
      const answer = await hostilePost({ url, bytes: HUGE, headers, chunked });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'body: is larger than 1048576 bytes, the most POST /api/v1/runs accepts',
        field: 'body',
      });
      answeredUnread(answer);
    }
    expect(await database.db.select().from(runs)).toEqual([]);
    // The same token's honest submission goes through afterwards.
    await world.submit({ repository, commit, cloneUrl });
    expect(await database.db.select().from(runs)).toHaveLength(1);
  });
});
