import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { deliveries } from '../../schemas/tables/deliveries.js';
import { createRunner } from '../../store/create-runner.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { sendWebhook } from '../github/send-webhook.js';
import { sharedTestAppCredentials } from '../github/test-app-credentials.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

// Issue 9, item 5: one NUL byte — in a metrics file, a log line, a param, a cancel reason,
// a signed webhook payload — or a date that is no date used to answer 500 with SQL and the
// payload in the body, and jam the run and its runner. Each is now stored as data (NUL as
// U+FFFD) or refused with a 4xx naming the field; no answer carries SQL or the input.

const { appId, privateKey, webhookSecret } = sharedTestAppCredentials();
const REPLACED = '\uFFFD';

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
  await world.start({
    APP_ID: String(appId),
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET: webhookSecret,
    FLUKSIO_ALLOWED_OWNERS: 'acme',
    GITHUB_API_URL: 'http://127.0.0.1:9',
  });
});
afterEach(async () => {
  await world.close();
});

/** An answer of the control plane: never SQL, never a NUL, never a 5xx. */
async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${world.app.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(500);
  expect(text).not.toMatch(/\bselect\b|\binsert\b|\bupdate\b|\\u0000|jsonb/i);
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('a NUL byte, where a stage or a caller can put one', () => {
  test("a stage's metrics file, log and annotation holding NUL: the run succeeds, the byte stored as U+FFFD", async () => {
    const { repository, commit, cloneUrl } = await world.repo({
      'fluksio.yml': `version: 1
params:
  note: { type: string, default: "" }
stages:
  train:
    cmd: python3 train.py \${note}
    params: [note]
    metrics: [metrics.json]
`,
      'train.py': String.raw`import sys
print("line with a \x00 byte")
print("::error file=train.py,line=2::bad \x00 byte")
print("note is", sys.argv[1])
with open("metrics.json", "w") as f:
    f.write('{"a\\u0000b": 1, "loss": 0.5}')
`,
      '.gitignore': 'metrics.json\n',
    });
    await world.allow([repository]);
    await world.runner('box');
    const runId = await world.submit({ repository, commit, cloneUrl, params: { note: 'x\u0000y' } });
    const report = await world.waitFor(runId);
    expect(report.run).toMatchObject({ status: 'succeeded', params: { note: `x${REPLACED}y` } });
    expect(report.metrics).toEqual({ [`a${REPLACED}b`]: 1, loss: 0.5 });
    expect(report.annotations).toMatchObject([{ message: `bad ${REPLACED} byte`, line: 2 }]);
    const log = await call('GET', `/api/v1/runs/${runId}/logs/train`, world.apiToken);
    expect(log.json.lines).toEqual(
      expect.arrayContaining([`line with a ${REPLACED} byte`, `note is x${REPLACED}y`]),
    );
  });

  test('a cancel reason holding NUL is stored as U+FFFD', async () => {
    const { repository, commit, cloneUrl } = await world.repo({ 'fluksio.yml': 'version: 1\nstages: {}\n' });
    const token = await world.allow([repository]);
    const runId = await world.submit({ repository, commit, cloneUrl, labels: ['nobody'] });
    const cancelled = await call('POST', `/api/v1/runs/${runId}/cancel`, token, { reason: 'stop\u0000now' });
    expect(cancelled.status).toBe(200);
    expect((await world.row(runId)).statusReason).toBe(`stop${REPLACED}now`);
  });

  test('a runner token writing NUL, bad dates and out-of-range numbers: stored as data or a 4xx naming the field', async () => {
    const { repository, commit, cloneUrl } = await world.repo({ 'fluksio.yml': 'version: 1\nstages: {}\n' });
    await world.allow([repository]);
    const runnerToken = `fxr_${randomBytes(32).toString('base64url')}`;
    await createRunner({
      db: database.db,
      name: 'rogue',
      owner: 'local',
      labels: ['rogue'],
      repositories: [],
      tokenHash: hashToken(runnerToken),
    });
    const runId = await world.submit({ repository, commit, cloneUrl, labels: ['rogue'] });
    const claim = (await call('POST', '/api/v1/runner/claim', runnerToken, { waitSeconds: 5 }))
      .json as unknown as Claim;
    expect(claim.run.id).toBe(runId);
    const runPath = `/api/v1/runs/${runId}`;
    const { lease } = claim;
    const digest = 'c'.repeat(64);
    await call('POST', `${runPath}/start`, runnerToken, {
      lease,
      codeDigest: digest,
      envDigest: digest,
      ...ranAsClaimed(claim),
    });

    const refusals: [unknown, string][] = [
      [{ type: 'stage.started', stage: 'train', at: 'yesterday', seq: 0 }, 'events[0].at'],
      [{ type: 'stage.started', stage: 'train', at: '0000-01-01T00:00:00Z', seq: 0 }, 'events[0].at'],
      [{ type: 'stage.log', stage: 'train', lines: ['x'], seq: 2 ** 31 }, 'events[0].seq'],
    ];
    for (const [event, field] of refusals) {
      const refused = await call('POST', `${runPath}/events`, runnerToken, {
        lease,
        attempt: 1,
        events: [event],
      });
      expect(refused).toMatchObject({ status: 400, json: { field } });
    }
    const stored = await call('POST', `${runPath}/events`, runnerToken, {
      lease,
      attempt: 1,
      events: [
        { type: 'stage.started', stage: 'tr\u0000ain', at: new Date().toISOString(), seq: 0 },
        { type: 'stage.log', stage: 'tr\u0000ain', lines: ['a\u0000b', 'lone \ud800 surrogate'], seq: 1 },
        {
          type: 'metric.points',
          points: [{ stage: 'tr\u0000ain', name: 'l\u0000oss', step: 0, value: 1 }],
          seq: 2,
        },
      ],
    });
    expect(stored).toMatchObject({ status: 200, json: { applied: 3 } });
    const finished = await call('POST', `${runPath}/finish`, runnerToken, {
      lease,
      status: 'failed',
      reason: 'it \u0000 broke',
      metrics: { 'a\u0000b': 1 },
    });
    expect(finished.status).toBe(200);
    const report = await world.report(runId);
    expect(report.run).toMatchObject({ status: 'failed', reason: `it ${REPLACED} broke` });
    expect(report.metrics).toEqual({ [`a${REPLACED}b`]: 1 });
    const log = await call('GET', `${runPath}/logs/tr${REPLACED}ain`, world.apiToken);
    expect(log.json.lines).toEqual([`a${REPLACED}b`, `lone ${REPLACED} surrogate`]);
  });

  test('a signed webhook payload holding NUL is stored, the byte as U+FFFD', async () => {
    const id = randomUUID();
    const answer = await sendWebhook(
      `${world.app.url}/api/github/webhooks`,
      {
        name: 'push',
        id,
        payload: {
          ref: 'refs/heads/main',
          head_commit: { message: 'fix\u0000it' },
          repository: { owner: { login: 'stranger' } },
        },
      },
      webhookSecret,
    );
    expect(answer.status).toBe(200);
    const [row] = await database.db.select().from(deliveries).where(eq(deliveries.id, id));
    expect(row?.payload).toMatchObject({ head_commit: { message: `fix${REPLACED}it` } });
  });
});
