import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { Annotation } from '../../schemas/annotation.js';
import { startLeasedRun } from '../../store/leases/start-leased-run.js';
import {
  closeOutboxDatabase,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';

let world: OutboxWorld;

/** An in-progress refresh interval longer than any test here takes. */
const REFRESH_MS = 60_000;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

function failureAnnotations(count: number): Annotation[] {
  return Array.from({ length: count }, (_, index) => ({
    stage: 'train',
    path: 'train.py',
    line: index + 1,
    level: 'error' as const,
    message: `problem ${index + 1}`,
    title: null,
  }));
}

/** The message of the first annotation a check-run request carries, if any. */
function firstAnnotationMessage(body: unknown): unknown {
  const output = (body as { output?: { annotations?: Array<{ message?: unknown }> } } | null)?.output;
  return output?.annotations?.[0]?.message;
}

/** The run abandoned and claimed again: attempt 2 starts, dropping attempt 1's records. */
async function startSecondAttempt(run: Awaited<ReturnType<OutboxWorld['queueRun']>>): Promise<void> {
  await world.updateRun(run.id, { attempt: 2, leaseId: 'lease-2', startedAt: null });
  await startLeasedRun({
    db: world.db,
    runId: run.id,
    leaseId: 'lease-2',
    codeDigest: 'c'.repeat(64),
    envDigest: 'e'.repeat(64),
    params: run.params,
    paramsDigest: run.paramsDigest,
  });
}

describe('a run’s check run', () => {
  test('goes queued → in progress → completed success as one check run, rendered from the database', async () => {
    const outbox = await world.openOutbox();
    const run = await world.queueRun();
    await outbox.notifyRun(run.id);
    const [created] = await waitFor('the queued check run', () => {
      const found = world.checkRunsOf(run.id);
      return found.length > 0 && found;
    });
    expect(created).toMatchObject({
      name: 'fluksio',
      headSha: run.commit,
      status: 'queued',
      conclusion: null,
    });
    expect(created?.output.title).toContain('Waiting for a runner labelled gpu');
    expect(created?.detailsUrl).toBe(`https://fluksio.example.com/api/v1/runs/${run.id}`);

    await world.updateRun(run.id, { status: 'running', startedAt: new Date(), runnerName: 'gpu-box' });
    await outbox.notifyRun(run.id);
    await waitFor('in progress', () => world.checkRunsOf(run.id)[0]?.status === 'in_progress');

    await world.updateRun(run.id, finished('succeeded', { metrics: { accuracy: 0.9 } }));
    await outbox.notifyRun(run.id);
    const done = await waitFor('completed', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.status === 'completed' && checkRun;
    });
    expect(done.conclusion).toBe('success');
    expect(done.output.summary).toContain('gpu-box');
    expect(done.actions.map((action) => action.identifier)).toEqual(['rerun', 'rerun-no-cache']);
    expect(world.checkRunsOf(run.id)).toHaveLength(1);
    expect(done.history.map((change) => change.method)).toEqual(['POST', 'PATCH', 'PATCH']);
    const row = await waitFor('recorded as sent', async () => {
      const check = await world.checkRow(run.id);
      return check.sentVersion === check.renderVersion && check;
    });
    expect(row.checkRunId).toBe(done.id);
  });

  test('a failed run with 120 annotations sends them in three requests of at most 50, all on the check run', async () => {
    const run = await world.queueRun();
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await world.addAnnotations(run.id, failureAnnotations(120));
    await world.updateRun(run.id, finished('failed', { statusReason: 'Stage train failed (exit code 1)' }));
    // Opened once the run is over: its reconciler, which looks at start, would otherwise
    // send an earlier state (with no annotations yet) first.
    const outbox = await world.openOutbox();
    await outbox.notifyRun(run.id);

    const done = await waitFor('all annotations', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.annotations.length === 120 && checkRun;
    });
    await waitFor('sent', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion === row.renderVersion;
    });
    expect(done.conclusion).toBe('failure');
    expect(done.annotations.map((note) => note.message)).toEqual(
      failureAnnotations(120).map((note) => note.message),
    );
    const pages = done.history.map(
      (change) => ((change.body.output as { annotations?: unknown[] } | undefined)?.annotations ?? []).length,
    );
    expect(pages).toEqual([50, 50, 20]);
    expect((await world.checkRow(run.id)).annotationsSent).toBe(120);
  });

  test('annotations arriving later are appended after those already sent, never again', async () => {
    const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: 1 } });
    const run = await world.queueRun();
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await world.addAnnotations(run.id, failureAnnotations(30));
    await outbox.notifyRun(run.id);
    await waitFor('30 annotations', () => world.checkRunsOf(run.id)[0]?.annotations.length === 30);

    await world.addAnnotations(run.id, failureAnnotations(70).slice(30));
    await world.updateRun(run.id, finished('failed'));
    await outbox.notifyRun(run.id);
    const done = await waitFor('completed', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.conclusion === 'failure' && checkRun;
    });
    expect(done.annotations.map((note) => note.start_line)).toEqual(
      Array.from({ length: 70 }, (_, index) => index + 1),
    );
  });

  test('a run retried after its runner vanished sends its new attempt’s annotations after the old ones', async () => {
    const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: 1 } });
    const run = await world.queueRun();
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await world.addAnnotations(run.id, failureAnnotations(12));
    await outbox.notifyRun(run.id);
    await waitFor('12 annotations', () => world.checkRunsOf(run.id)[0]?.annotations.length === 12);

    // Abandoned and claimed again: attempt 2 starts, dropping attempt 1's records.
    await startSecondAttempt(run);
    const second = failureAnnotations(5).map((note) => ({ ...note, message: `attempt 2: ${note.message}` }));
    await world.addAnnotations(run.id, second);
    await world.updateRun(run.id, finished('failed'));
    await outbox.notifyRun(run.id);
    const done = await waitFor('completed', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.conclusion === 'failure' && checkRun;
    });
    expect(done.annotations.slice(12).map((note) => note.message)).toEqual(
      second.map((note) => note.message),
    );
    expect(world.checkRunsOf(run.id)).toHaveLength(1);
  });

  test('a sync of attempt 1 still in flight when attempt 2 starts leaves attempt 2’s annotations to be sent', async () => {
    const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: 1 } });
    const run = await world.queueRun();
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await world.addAnnotations(run.id, failureAnnotations(60));
    // Attempt 1's second page (annotations 51–60) is applied, and its answer held while
    // attempt 2 starts; only then does the sync hear back and record what it sent.
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Matched by its first annotation, not by being the first PATCH: a sweep may have
    // created the check run (queued, with no annotations) before, and then 1–50 go in a PATCH.
    world.double.failNext(
      (request) => {
        const isSecondPage =
          request.method === 'PATCH' &&
          request.route === '/repos/{owner}/{repo}/check-runs/{check_run_id}' &&
          firstAnnotationMessage(request.body) === 'problem 51';
        if (isSecondPage) arrived();
        return isSecondPage;
      },
      { answerAfter: released },
    );
    await outbox.notifyRun(run.id);
    await inFlight;

    await startSecondAttempt(run);
    release();
    const second = failureAnnotations(5).map((note) => ({ ...note, message: `attempt 2: ${note.message}` }));
    await world.addAnnotations(run.id, second);
    await world.updateRun(run.id, finished('failed'));
    await outbox.notifyRun(run.id);
    const done = await waitFor('completed', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.conclusion === 'failure' && checkRun;
    });
    await waitFor('the final state recorded', async () => {
      const row = await world.checkRow(run.id);
      return row.sentVersion === row.renderVersion;
    });
    expect(world.checkRunsOf(run.id)[0]?.annotations.map((note) => note.message)).toEqual([
      ...failureAnnotations(60).map((note) => note.message),
      ...second.map((note) => note.message),
    ]);
    expect(done.id).toBe((await world.checkRow(run.id)).checkRunId);
  });

  test.each([
    { fault: 'a 502', injected: { status: 502 } },
    { fault: 'a lost response', injected: { dropAfterApplying: true } },
  ])(
    'a retried run’s annotations reach GitHub once each when its first update fails with $fault (the retry asks GitHub)',
    async ({ injected }) => {
      const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: 1 } });
      const run = await world.queueRun();
      await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
      await world.addAnnotations(run.id, failureAnnotations(12));
      await outbox.notifyRun(run.id);
      await waitFor('12 annotations', () => world.checkRunsOf(run.id)[0]?.annotations.length === 12);
      await waitFor('attempt 1 recorded', async () => (await world.checkRow(run.id)).annotationsSent === 12);

      await startSecondAttempt(run);
      // Attempt 2's first update fails: the outbox job is retried, uncertain of what GitHub holds.
      world.double.failNext('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', injected);
      const second = failureAnnotations(5).map((note) => ({
        ...note,
        message: `attempt 2: ${note.message}`,
      }));
      await world.addAnnotations(run.id, second);
      await world.updateRun(run.id, finished('failed'));
      await outbox.notifyRun(run.id);
      await waitFor('the final state', async () => {
        const row = await world.checkRow(run.id);
        return row.sentVersion === row.renderVersion;
      });

      const checkRuns = world.checkRunsOf(run.id);
      expect(checkRuns).toHaveLength(1);
      expect(checkRuns[0]?.conclusion).toBe('failure');
      expect(checkRuns[0]?.annotations.map((note) => note.message)).toEqual([
        ...failureAnnotations(12).map((note) => note.message),
        ...second.map((note) => note.message),
      ]);
      expect(world.double.requests.filter((request) => request.fault !== undefined)).toHaveLength(1);
    },
  );

  test('an in-progress run is refreshed at most once per interval, and its completion goes out at once', async () => {
    // An interval longer than the test: no refresh is due while it runs, however slow the
    // machine, and a completion that waited for one would not arrive in time.
    const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: REFRESH_MS } });
    const run = await world.queueRun({ status: 'running', startedAt: new Date(), statusReason: null });
    await outbox.notifyRun(run.id);
    await waitFor('in progress', () => world.checkRunsOf(run.id)[0]?.status === 'in_progress');

    for (let step = 0; step < 5; step += 1) {
      await world.updateRun(run.id, { metrics: { step } });
      await outbox.notifyRun(run.id);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(world.checkRunsOf(run.id)[0]?.history).toHaveLength(1);

    const finishing = Date.now();
    await world.updateRun(run.id, finished('succeeded'));
    await outbox.notifyRun(run.id);
    await waitFor('completed', () => world.checkRunsOf(run.id)[0]?.conclusion === 'success', REFRESH_MS / 2);
    expect(Date.now() - finishing).toBeLessThan(REFRESH_MS / 2);
    expect(world.checkRunsOf(run.id)[0]?.history).toHaveLength(2);
  });

  test('a run without a check row (submitted through the API) sends nothing', async () => {
    const outbox = await world.openOutbox();
    await outbox.notifyRun('01NOSUCHRUN0000000000000000');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(world.double.requests).toEqual([]);
  });
});
