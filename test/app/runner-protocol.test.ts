import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ulid } from 'ulid';
import { Claim } from '../../schemas/protocol/claim.js';
import { HeartbeatReply } from '../../schemas/protocol/lease-requests.js';
import type { RunEvent } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { runs } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import { createRun } from '../../store/runs/create-run.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

const DIGEST = 'd'.repeat(64);
/**
 * How long a claim below waits: at its end it looks once more and finds the run anyway, so
 * a claim answered well before (however slow the machine) was answered by what the test names.
 */
const CLAIM_WAIT_SECONDS = 55;
const SOONER_THAN_THE_WAIT_MS = 30_000;

let database: TestDatabase;
let plane: TestControlPlane;
let submitter: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
});
afterEach(async () => {
  await plane.close();
});

function finishedStage(name: string, overrides: Partial<StageRecord> = {}): StageRecord {
  return {
    name,
    status: 'ran',
    cacheKey: null,
    keyInputs: null,
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: ['first run'],
    notes: [],
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: 12,
    exitCode: 0,
    outs: [],
    metrics: { loss: 0.25 },
    logTail: 'done\n',
    logDigest: null,
    error: null,
    dirtyReasons: [],
    warnings: [],
    usage: null,
    pending: null,
    ...overrides,
  };
}

function trainEvents(): RunEvent[] {
  return [
    { seq: 0, type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    { seq: 1, type: 'stage.log', stage: 'train', lines: ['epoch 1', 'epoch 2'] },
    {
      seq: 2,
      type: 'metric.points',
      points: [
        { stage: 'train', name: 'loss', step: 0, value: 0.5 },
        { stage: 'train', name: 'loss', step: 1, value: 0.25 },
      ],
    },
    { seq: 3, type: 'stage.finished', stage: finishedStage('train') },
  ];
}

/** A queued run submitted over HTTP, then claimed by `runnerToken`; resolves with the claim. */
async function submitAndClaim(runnerToken: string, body: Record<string, unknown> = {}): Promise<Claim> {
  const submitted = await plane.submit(submitter, body);
  expect(submitted.status).toBe(201);
  const claim = await plane.claim(runnerToken);
  if (!claim) throw new Error('nothing to claim');
  return claim;
}

describe('authentication', () => {
  test('a claim without a token, or with an unknown one, is 401 naming Authorization', async () => {
    const missing = await plane.call('POST', '/api/v1/runner/claim', { json: { waitSeconds: 0 } });
    expect(missing.status).toBe(401);
    expect(missing.json.field).toBe('Authorization');
    const wrong = await plane.call('POST', '/api/v1/runner/claim', {
      token: 'not-a-token',
      json: { waitSeconds: 0 },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({
      field: 'Authorization',
      error: expect.stringMatching(/runner token is not known/),
    });
  });

  test("a submitter's API token is not a runner token", async () => {
    const answer = await plane.call('POST', '/api/v1/runner/claim', {
      token: submitter,
      json: { waitSeconds: 0 },
    });
    expect(answer.status).toBe(401);
  });

  test('a heartbeat with a wrong token is 401 and renews nothing', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const claim = await submitAndClaim(token);
    const [before] = await database.db.select().from(runs).where(eq(runs.id, claim.run.id));
    const answer = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
      token: 'f'.repeat(64),
      json: { lease: claim.lease },
    });
    expect(answer.status).toBe(401);
    const [after] = await database.db.select().from(runs).where(eq(runs.id, claim.run.id));
    expect(after?.leaseExpiresAt).toEqual(before?.leaseExpiresAt);
  });
});

describe('claim', () => {
  test('a runner gets only runs whose labels it carries, with everything it needs to run one', async () => {
    const cpu = await plane.addRunner({ name: 'cpu-box', labels: ['cpu'] });
    const gpu = await plane.addRunner({ name: 'gpu-box', labels: ['gpu', 'a100'] });
    const submitted = await plane.submit(submitter, {
      labels: ['gpu'],
      params: { lr: 0.1 },
      timeoutMs: 3_600_000,
    });
    expect(submitted.status).toBe(201);

    expect(await plane.claim(cpu.token)).toBeNull();
    const claim = Claim.parse(await plane.claim(gpu.token));
    expect(claim).toMatchObject({
      run: {
        id: (submitted.json.run as { id: string }).id,
        attempt: 1,
        params: { lr: 0.1 },
        pipelinePath: 'fluksio.yml',
        trustDomain: 'trusted',
        labels: ['gpu'],
        timeoutMs: 3_600_000,
      },
      repo: {
        repository: 'acme/model',
        cloneUrl: 'https://github.com/acme/model.git',
        fetchRef: null,
        fork: false,
      },
      commit: COMMIT,
      git: { extraHeader: null },
      heartbeatIntervalMs: 20_000,
    });
    expect(await plane.claim(gpu.token)).toBeNull();
  });

  test('a runner bound to another owner never gets the run', async () => {
    const other = await plane.addRunner({ name: 'elsewhere', owner: 'globex' });
    await plane.submit(submitter, {});
    expect(await plane.claim(other.token)).toBeNull();
  });

  test('a waiting claim is woken by a submit instead of waiting out its re-check', async () => {
    await plane.close();
    plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_CLAIM_RECHECK: '1m' } });
    submitter = await plane.addApiToken({ repositories: ['acme/model'] });
    const { token } = await plane.addRunner({ name: 'box' });
    const started = Date.now();
    const waiting = plane.claim(token, CLAIM_WAIT_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await plane.submit(submitter, {});
    const claim = await waiting;
    expect(claim).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(SOONER_THAN_THE_WAIT_MS);
  });

  test('a run queued without a ring (Redis lost it) is still found by the re-check', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const waiting = plane.claim(token, CLAIM_WAIT_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Straight into Postgres: nobody rings the doorbell.
    await createRun({
      db: database.db,
      run: {
        id: ulid(),
        repository: 'acme/model',
        pipelinePath: 'fluksio.yml',
        commit: COMMIT,
        params: {},
        paramsDigest: DIGEST,
        status: 'queued',
        cloneUrl: 'https://github.com/acme/model.git',
      },
    });
    const started = Date.now();
    expect(await waiting).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(SOONER_THAN_THE_WAIT_MS);
  });

  test('a runner that hung up while waiting is not handed the next run', async () => {
    const gone = await plane.addRunner({ name: 'gone' });
    const present = await plane.addRunner({ name: 'present' });
    const hangUp = new AbortController();
    const abandoned = fetch(`${plane.url}/api/v1/runner/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gone.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ waitSeconds: 20 }),
      signal: hangUp.signal,
    }).catch(() => null);
    await new Promise((resolve) => setTimeout(resolve, 300));
    hangUp.abort();
    await abandoned;
    await new Promise((resolve) => setTimeout(resolve, 300));
    await plane.submit(submitter, {});
    const claim = await plane.claim(present.token, 5);
    expect(claim).not.toBeNull();
    expect((await getRunDetail({ db: database.db, runId: claim?.run.id ?? '' }))?.run.runnerName).toBe(
      'present',
    );
  });

  test('a claim with nothing to take answers 204 once its wait is over', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const started = Date.now();
    expect(await plane.claim(token, 1)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  test('a claim body with a bad waitSeconds is 400 naming it', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const answer = await plane.call('POST', '/api/v1/runner/claim', { token, json: { waitSeconds: 600 } });
    expect(answer.status).toBe(400);
    expect(answer.json.field).toBe('waitSeconds');
  });
});

describe('the run a runner holds', () => {
  test("a runner sending more of a stage's log than FLUKSIO_MAX_STAGE_LOG has it cut there, saying so, its other events applied", async () => {
    await plane.close();
    plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_MAX_STAGE_LOG: '40' } });
    const { token } = await plane.addRunner({ name: 'old-box' });
    const claim = await submitAndClaim(token);
    const runPath = `/api/v1/runs/${claim.run.id}`;
    const start = await plane.call('POST', `${runPath}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    expect(start.status).toBe(200);
    const ten = (letter: string) => letter.repeat(10);
    const send = async (events: RunEvent[]) =>
      (
        await plane.call('POST', `${runPath}/events`, {
          token,
          json: { lease: claim.lease, attempt: 1, events },
        })
      ).status;
    expect(
      await send([
        { seq: 0, type: 'stage.started', stage: 'train', at: new Date().toISOString() },
        { seq: 1, type: 'stage.log', stage: 'train', lines: [ten('a'), ten('b'), ten('c')] },
      ]),
    ).toBe(200);
    // A runner that does not stop at the stage's log_limit (an old or a hostile one).
    expect(
      await send([
        { seq: 2, type: 'stage.log', stage: 'train', lines: [ten('d'), ten('e')] },
        { seq: 3, type: 'stage.log', stage: 'eval', lines: ['small'] },
        { seq: 4, type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 0, value: 0.5 }] },
      ]),
    ).toBe(200);
    expect(await send([{ seq: 5, type: 'stage.log', stage: 'train', lines: [ten('f')] }])).toBe(200);

    const logs = await plane.call('GET', `${runPath}/logs/train`, { token: submitter });
    expect(logs.json).toEqual({
      stage: 'train',
      lines: [
        ten('a'),
        ten('b'),
        ten('c'),
        "fluksio: this stage's log passed the 40 B the control plane keeps of one stage (FLUKSIO_MAX_STAGE_LOG): the rest was dropped",
      ],
    });
    expect((await plane.call('GET', `${runPath}/logs/eval`, { token: submitter })).json).toMatchObject({
      lines: ['small'],
    });
    const series = await plane.call('GET', `${runPath}/metrics`, { token: submitter });
    expect(series.json).toMatchObject({ series: { loss: { points: [{ step: 0, value: 0.5 }] } } });
  });

  test('heartbeat, start, events once each, finish: the run reads back as the runner reported it', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const claim = await submitAndClaim(token);
    const runPath = `/api/v1/runs/${claim.run.id}`;

    const heartbeat = await plane.call('POST', `${runPath}/heartbeat`, {
      token,
      json: { lease: claim.lease },
    });
    expect(heartbeat.status).toBe(200);
    expect(HeartbeatReply.parse(heartbeat.json)).toEqual({ cancel: false, reason: null, finishAs: null });

    const start = await plane.call('POST', `${runPath}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });
    expect(start.status).toBe(200);

    const batch = { lease: claim.lease, attempt: 1, events: trainEvents() };
    const first = await plane.call('POST', `${runPath}/events`, { token, json: batch });
    expect(first).toMatchObject({ status: 200, json: { applied: 4, acked: 4 } });
    const again = await plane.call('POST', `${runPath}/events`, { token, json: batch });
    expect(again).toMatchObject({ status: 200, json: { applied: 0, acked: 4 } });

    const finish = { lease: claim.lease, status: 'succeeded', reason: null, metrics: { loss: 0.25 } };
    expect((await plane.call('POST', `${runPath}/finish`, { token, json: finish })).status).toBe(200);
    // A finish whose answer was lost is sent again: same answer, nothing changed.
    expect(await plane.call('POST', `${runPath}/finish`, { token, json: finish })).toMatchObject({
      status: 200,
      json: { status: 'succeeded' },
    });

    const report = await plane.call('GET', runPath, { token: submitter });
    expect(report.status).toBe(200);
    expect(report.json).toMatchObject({
      run: { id: claim.run.id, status: 'succeeded', codeDigest: DIGEST },
      stages: [{ name: 'train', status: 'ran' }],
      metrics: { loss: 0.25 },
      repository: 'acme/model',
      attempt: 1,
      runner: 'box',
    });
    const logs = await plane.call('GET', `${runPath}/logs/train`, { token: submitter });
    expect(logs.json).toEqual({ stage: 'train', lines: ['epoch 1', 'epoch 2'] });
    const series = await plane.call('GET', `${runPath}/metrics`, { token: submitter });
    expect(series.json).toEqual({
      series: {
        loss: {
          stage: 'train',
          points: [
            { step: 0, value: 0.5 },
            { step: 1, value: 0.25 },
          ],
        },
      },
    });
  });

  test("another runner's run is 404 like a run that does not exist, whatever lease it sends", async () => {
    const owner = await plane.addRunner({ name: 'box' });
    const intruder = await plane.addRunner({ name: 'intruder' });
    const claim = await submitAndClaim(owner.token);
    for (const [method, suffix, json] of [
      ['POST', 'heartbeat', { lease: claim.lease }],
      [
        'POST',
        'start',
        { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
      ],
      ['POST', 'events', { lease: claim.lease, attempt: 1, events: trainEvents() }],
      ['POST', 'finish', { lease: claim.lease, status: 'failed', reason: 'no', metrics: {} }],
      ['POST', 'release', { lease: claim.lease, reason: 'mine now' }],
    ] as const) {
      const answer = await plane.call(method, `/api/v1/runs/${claim.run.id}/${suffix}`, {
        token: intruder.token,
        json,
      });
      expect(answer.status, suffix).toBe(404);
      expect(answer.json, suffix).toEqual({ error: `There is no run ${claim.run.id}`, field: 'id' });
    }
    const cache = await plane.call('GET', `/api/v1/runs/${claim.run.id}/cache/${DIGEST}`, {
      token: intruder.token,
      headers: { 'x-fluksio-lease': claim.lease },
    });
    expect(cache.status).toBe(404);
    const [run] = await database.db.select().from(runs).where(eq(runs.id, claim.run.id));
    expect(run).toMatchObject({ status: 'running', runnerName: 'box', startedAt: null });
  });

  test('a stale lease is 409 and changes nothing', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const first = await submitAndClaim(token);
    const runPath = `/api/v1/runs/${first.run.id}`;
    await plane.call('POST', `${runPath}/start`, {
      token,
      json: { lease: first.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(first) },
    });
    const released = await plane.call('POST', `${runPath}/release`, {
      token,
      json: { lease: first.lease, reason: 'SIGTERM' },
    });
    expect(released).toMatchObject({ status: 200, json: { status: 'queued' } });
    const second = await plane.claim(token);
    expect(second?.run).toMatchObject({ id: first.run.id, attempt: 2 });
    const [before] = await database.db.select().from(runs).where(eq(runs.id, first.run.id));

    for (const [suffix, json] of [
      ['heartbeat', { lease: first.lease }],
      ['start', { lease: first.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(first) }],
      ['events', { lease: first.lease, attempt: 1, events: trainEvents() }],
      ['finish', { lease: first.lease, status: 'succeeded', reason: null, metrics: { loss: 1 } }],
      ['release', { lease: first.lease, reason: 'again' }],
    ] as const) {
      const answer = await plane.call('POST', `${runPath}/${suffix}`, { token, json });
      expect(answer.status, suffix).toBe(409);
      expect(answer.json.error).toMatch(/stale/);
    }
    const cache = await plane.call('GET', `${runPath}/cache/${DIGEST}`, {
      token,
      headers: { 'x-fluksio-lease': first.lease },
    });
    expect(cache.status).toBe(409);

    const [after] = await database.db.select().from(runs).where(eq(runs.id, first.run.id));
    expect(after).toEqual(before);
    expect(await database.db.select().from(stages).where(eq(stages.runId, first.run.id))).toEqual([]);
  });

  test('a malformed event batch is 400 naming the field, and applies nothing', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const claim = await submitAndClaim(token);
    const runPath = `/api/v1/runs/${claim.run.id}`;
    await plane.call('POST', `${runPath}/start`, {
      token,
      json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
    });

    const badSeq = await plane.call('POST', `${runPath}/events`, {
      token,
      json: { lease: claim.lease, attempt: 1, events: [{ ...trainEvents()[0], seq: -1 }] },
    });
    expect(badSeq.status).toBe(400);
    expect(badSeq.json).toMatchObject({
      field: 'events[0].seq',
      error: expect.stringContaining('events[0].seq'),
    });

    const badType = await plane.call('POST', `${runPath}/events`, {
      token,
      json: {
        lease: claim.lease,
        attempt: 1,
        events: [trainEvents()[0], { seq: 1, type: 'stage.exploded' }],
      },
    });
    expect(badType.status).toBe(400);
    expect(badType.json.field).toBe('events[1].type');

    const noEvents = await plane.call('POST', `${runPath}/events`, {
      token,
      json: { lease: claim.lease, attempt: 1 },
    });
    expect(noEvents).toMatchObject({ status: 400, json: { field: 'events' } });

    const notJson = await plane.call('POST', `${runPath}/events`, {
      token,
      body: '{"lease":',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson).toMatchObject({ status: 400, json: { field: 'body' } });

    expect(await database.db.select().from(stages).where(eq(stages.runId, claim.run.id))).toEqual([]);
  });

  test('an unknown run is 404', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const answer = await plane.call('POST', `/api/v1/runs/${ulid()}/heartbeat`, {
      token,
      json: { lease: DIGEST },
    });
    expect(answer).toMatchObject({ status: 404, json: { field: 'id' } });
  });

  test('a cancel reaches the runner in its heartbeat reply', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const claim = await submitAndClaim(token);
    const cancel = await plane.call('POST', `/api/v1/runs/${claim.run.id}/cancel`, {
      token: submitter,
      json: { reason: 'wrong params' },
    });
    expect(cancel.status).toBe(200);
    const heartbeat = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
      token,
      json: { lease: claim.lease },
    });
    expect(heartbeat.json).toEqual({ cancel: true, reason: 'wrong params', finishAs: 'cancelled' });
  });

  test('a released run is claimed again, by a waiting runner too', async () => {
    const first = await plane.addRunner({ name: 'first' });
    const second = await plane.addRunner({ name: 'second' });
    const claim = await submitAndClaim(first.token);
    const waiting = plane.claim(second.token, 10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await plane.call('POST', `/api/v1/runs/${claim.run.id}/release`, {
      token: first.token,
      json: { lease: claim.lease, reason: 'Runner first stopped (SIGTERM); queued again' },
    });
    const again = await waiting;
    expect(again?.run.id).toBe(claim.run.id);
    expect(again?.lease).not.toBe(claim.lease);
    const detail = await getRunDetail({ db: database.db, runId: claim.run.id });
    expect(detail?.run.runnerName).toBe('second');
  });
});
