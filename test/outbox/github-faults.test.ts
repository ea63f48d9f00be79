import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Annotation } from '../../schemas/annotation.js';
import { primaryRateLimit, secondaryRateLimit } from '../github/github-double.js';
import {
  closeOutboxDatabase,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';

const CREATE = 'POST /repos/{owner}/{repo}/check-runs';
const UPDATE = 'PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}';

let world: OutboxWorld;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

/** The requests of one route, with when they arrived, in order. */
function requestsTo(route: string): { status: number; fault?: string }[] {
  const [method, template] = route.split(' ');
  return world.double.requests.filter((request) => request.method === method && request.route === template);
}

function isCreate(request: { method: string; url: string }): boolean {
  return request.method === 'POST' && request.url === '/repos/{owner}/{repo}/check-runs';
}

describe('the outbox against a failing GitHub', () => {
  test('a 502, a secondary rate limit and a lost response to the create: the final state arrives, once', async () => {
    world.double.failNext(CREATE, { status: 502 });
    world.double.failNext(CREATE, secondaryRateLimit(1));
    world.double.failNext(CREATE, { dropAfterApplying: true });
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    await world.updateRun(run.id, finished('succeeded', { startedAt: new Date() }));
    await outbox.notifyRun(run.id);

    const done = await waitFor('the final state', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion === row.renderVersion && row;
    });
    const checkRuns = world.checkRunsOf(run.id);
    expect(checkRuns).toHaveLength(1);
    expect(checkRuns[0]).toMatchObject({ id: done.checkRunId, status: 'completed', conclusion: 'success' });
    expect(requestsTo(CREATE).map((request) => request.fault ?? request.status)).toEqual([
      'injected',
      'injected',
      'dropped',
    ]);
    // Adopted by external_id, then updated: never created a second time.
    expect(requestsTo(UPDATE)).toHaveLength(1);
    expect(world.double.pendingFaults()).toBe(0);
  });

  test('a refusal that asking again cannot change (404: the App lost the repository) is given up, not retried for ever', async () => {
    world.double.failNext(CREATE, { status: 404, times: 50 });
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    await outbox.notifyRun(run.id);
    await waitFor('the render given up', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion >= row.renderVersion;
    });
    expect(requestsTo(CREATE)).toHaveLength(1);
    expect(world.checkRunsOf(run.id)).toEqual([]);
    // A later change is tried again, once.
    await world.updateRun(run.id, finished('succeeded', { startedAt: new Date() }));
    await outbox.notifyRun(run.id);
    await waitFor('the second render given up', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion >= row.renderVersion && requestsTo(CREATE).length === 2;
    });
  });

  test('a secondary rate limit holds back every request of the installation for retry-after seconds', async () => {
    const outbox = await world.openOutbox();
    const first = await world.queueRun();
    world.double.failNext(CREATE, secondaryRateLimit(2));
    await outbox.notifyRun(first.id);
    // The installation is held back once the outbox has read the 403.
    const gateKey = `${world.prefix}:github-outbox:rate-limited:${world.installationId}`;
    await waitFor('the rate limit', async () => (await world.redis.exists(gateKey)) === 1);
    const second = await world.queueRun();
    await outbox.notifyRun(second.id);

    await waitFor(
      'both check runs',
      () => world.checkRunsOf(first.id).length + world.checkRunsOf(second.id).length === 2,
    );
    const limited = world.sent.findIndex((request) => isCreate(request));
    const limitedAt = world.sent[limited]?.at ?? Infinity;
    const later = world.sent.slice(limited + 1);
    expect(later.length).toBeGreaterThan(0);
    for (const request of later) expect(request.at - limitedAt).toBeGreaterThanOrEqual(2_000);
    expect(requestsTo(CREATE).map((request) => request.fault ?? request.status)).toEqual([
      'injected',
      201,
      201,
    ]);
  });

  test('an exhausted primary rate limit waits until x-ratelimit-reset', async () => {
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    const resetAt = new Date(Date.now() + 2_000);
    world.double.failNext(CREATE, primaryRateLimit(resetAt));
    await outbox.notifyRun(run.id);
    await waitFor('the check run', () => world.checkRunsOf(run.id).length === 1, 15_000);
    const [, retried] = world.sent.filter((request) => isCreate(request));
    // x-ratelimit-reset is in whole seconds, rounded up.
    expect(retried?.at).toBeGreaterThanOrEqual(Math.ceil(resetAt.getTime() / 1000) * 1000);
  });

  test('a lost response to an update with annotations appends none of them twice', async () => {
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    await outbox.notifyRun(run.id);
    await waitFor('the queued check run', () => world.checkRunsOf(run.id).length === 1);

    const notes: Annotation[] = Array.from({ length: 80 }, (_, index) => ({
      stage: 'train',
      path: 'train.py',
      line: index + 1,
      level: 'warning',
      message: `warning ${index + 1}`,
      title: null,
    }));
    await world.addAnnotations(run.id, notes);
    await world.updateRun(run.id, finished('failed', { startedAt: new Date() }));
    world.double.failNext(
      (request) => request.method === 'PATCH' && JSON.stringify(request.body).includes('"warning 51"'),
      { dropAfterApplying: true },
    );
    await outbox.notifyRun(run.id);
    await waitFor('sent', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion === row.renderVersion;
    });
    const [checkRun] = world.checkRunsOf(run.id);
    expect(checkRun?.annotations.map((note) => note.message)).toEqual(notes.map((note) => note.message));
    expect(checkRun?.conclusion).toBe('failure');
  });

  test('a state change while a sync is in flight is not lost', async () => {
    const octokit = await world.github(world.installationId);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    octokit.hook.before('request', async (options) => {
      if (!held && options.method === 'POST') {
        held = true;
        await released;
      }
    });
    world.github = async () => octokit;
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    await outbox.notifyRun(run.id);
    await waitFor('the create in flight', () => held);

    await world.updateRun(run.id, finished('cancelled', { statusReason: 'Cancelled by @octocat' }));
    await outbox.notifyRun(run.id);
    release();

    const done = await waitFor('cancelled', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.conclusion === 'cancelled' && checkRun;
    });
    expect(done.history.map((change) => change.method)).toEqual(['POST', 'PATCH']);
    expect(world.checkRunsOf(run.id)).toHaveLength(1);
  });
});
