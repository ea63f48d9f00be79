import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { BASELINE_LOOKUP_ATTEMPTS } from '../../app/github/outbox/outbox-baseline.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { fixRunBaseline } from '../../store/runs/fix-run-baseline.js';
import {
  closeOutboxDatabase,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';

const sha = (digit: string): string => digit.repeat(40);
const [M1, M2, M3, H1, H2] = ['1', '2', '3', '4', '5'].map(sha) as [string, string, string, string, string];

let world: OutboxWorld;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
  // main: M3 → M2 → M1; the pull request's head H2 → H1 → M2 branched off M2.
  world.double.setCommits(world.repository, [M3, M2, M1], { branch: 'main' });
  world.double.setCommits(world.repository, [H2, H1, M2, M1]);
});
afterEach(async () => {
  await world.close();
  expect(world.double.violations).toEqual([]);
});

function requestsTo(template: string, query: Record<string, string> = {}): number {
  return world.double.requests.filter(
    (request) =>
      request.route === template &&
      Object.entries(query).every(([name, value]) => request.query[name] === value),
  ).length;
}

describe('the baseline in a check run', () => {
  test('a pull request’s run is compared with the nearest success at or before the merge-base, fetched once', async () => {
    const goals = { accuracy: { goal: 'max' as const } };
    const baseline = await world.queueRun({ commit: M1, metricGoals: goals });
    await world.updateRun(baseline.id, finished('succeeded', { metrics: { accuracy: 0.8 } }));
    // A success on main after the merge-base is not this pull request's baseline.
    const later = await world.queueRun({ commit: M3, metricGoals: goals });
    await world.updateRun(later.id, finished('succeeded', { metrics: { accuracy: 0.95 } }));

    const outbox = await world.openOutbox({ settings: { inProgressRefreshMs: 1 } });
    const run = await world.queueRun({
      commit: H2,
      baseRef: 'main',
      prNumber: 3,
      trigger: 'pull_request',
      metricGoals: goals,
    });
    await outbox.notifyRun(run.id);
    await waitFor('queued', () => world.checkRunsOf(run.id).length === 1);
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await outbox.notifyRun(run.id);
    await waitFor('in progress', () => world.checkRunsOf(run.id)[0]?.status === 'in_progress');
    await world.updateRun(run.id, finished('succeeded', { metrics: { accuracy: 0.85 } }));
    await outbox.notifyRun(run.id);
    const done = await waitFor('completed', () => {
      const checkRun = world.checkRunsOf(run.id)[0];
      return checkRun?.conclusion === 'success' && checkRun;
    });

    expect(done.output.summary).toContain(`main @ ${M1.slice(0, 7)}`);
    expect(done.output.summary).toContain(baseline.id);
    expect(done.output.summary).not.toContain(later.id);
    expect(requestsTo('/repos/{owner}/{repo}/compare/{basehead}')).toBe(1);
    expect(requestsTo('/repos/{owner}/{repo}/commits', { sha: M2 })).toBe(1);
  });

  test('a push’s run is compared with its nearest ancestor’s success; a commit GitHub does not know has none', async () => {
    const earlier = await world.queueRun({ commit: M2 });
    await world.updateRun(earlier.id, finished('succeeded', { metrics: { loss: 0.3 } }));
    const outbox = await world.openOutbox();
    const run = await world.queueRun({ commit: M3 });
    await world.updateRun(run.id, finished('succeeded', { metrics: { loss: 0.2 } }));
    await outbox.notifyRun(run.id);
    const done = await waitFor(
      'completed',
      () => world.checkRunsOf(run.id)[0]?.conclusion === 'success' && world.checkRunsOf(run.id)[0],
    );
    expect(done && done.output.summary).toContain(`Against ${M2.slice(0, 7)}`);

    const stranger = await world.queueRun({ commit: 'f'.repeat(40) });
    await world.updateRun(stranger.id, finished('succeeded'));
    await outbox.notifyRun(stranger.id);
    const alone = await waitFor(
      'completed',
      () => world.checkRunsOf(stranger.id)[0]?.conclusion === 'success' && world.checkRunsOf(stranger.id)[0],
    );
    expect(alone && alone.output.summary).toContain('No baseline');
  });
});

const COMPARE = '/repos/{owner}/{repo}/compare/{basehead}';

async function runRow(runId: string): Promise<Run> {
  const [row] = await world.db.select().from(runs).where(eq(runs.id, runId));
  if (!row) throw new Error(`no run ${runId}`);
  return row;
}

/** A pull request's run at H2 finished as its runner's finish request leaves it (the route fixes what it can). */
async function finishedPullRequestRun(): Promise<Run> {
  const run = await world.queueRun({ commit: H2, baseRef: 'main', prNumber: 3, trigger: 'pull_request' });
  await world.updateRun(run.id, finished('succeeded', { metrics: { loss: 0.2 } }));
  await fixRunBaseline({ db: world.db, run });
  return runRow(run.id);
}

describe('the baseline fixed when an App-made run finishes', () => {
  test('a run that finishes before GitHub says where its baseline may be stays unfixed, and is fixed once GitHub answers', async () => {
    const mergeBaseRun = await world.queueRun({ commit: M1 });
    await world.updateRun(mergeBaseRun.id, finished('succeeded', { metrics: { loss: 0.3 } }));
    // Its own commit's run, which a baseline fixed from the run's own commit would take.
    const ownCommitRun = await world.queueRun({ commit: H2 });
    await world.updateRun(ownCommitRun.id, finished('succeeded', { metrics: { loss: 0.25 } }));
    let down = true;
    world.double.failNext((request) => down && request.route === COMPARE, { status: 502, times: 10_000 });
    const outbox = await world.openOutbox();

    const run = await finishedPullRequestRun();
    expect(run).toMatchObject({ status: 'succeeded', baselineFixed: false, baselineCommits: null });
    await outbox.notifyRun(run.id);
    const failed = await waitFor('a failed lookup counted', async () => {
      const row = await runRow(run.id);
      return row.baselineLookupFailures > 0 && row;
    });
    down = false;
    expect(failed.baselineFixed).toBe(false);

    const done = await waitFor(
      'completed',
      () => world.checkRunsOf(run.id)[0]?.conclusion === 'success' && world.checkRunsOf(run.id)[0],
    );
    const fixed = await runRow(run.id);
    expect(fixed).toMatchObject({
      baselineFixed: true,
      baselineRunId: mergeBaseRun.id,
      baselineCommits: [M2, M1],
      baselineMergeBase: M2,
    });
    expect(fixed.baselineLookupFailures).toBeLessThan(BASELINE_LOOKUP_ATTEMPTS);
    expect(done.output.summary).toContain(`main @ ${M1.slice(0, 7)}`);
    expect(done.output.summary).toContain(mergeBaseRun.id);
    expect(done.output.summary).not.toContain(ownCommitRun.id);
  });

  test(`a run GitHub never answers for is fixed from its own commit after ${BASELINE_LOOKUP_ATTEMPTS} failed lookups, and a warning says so`, async () => {
    const mergeBaseRun = await world.queueRun({ commit: M2 });
    await world.updateRun(mergeBaseRun.id, finished('succeeded', { metrics: { loss: 0.3 } }));
    const ownCommitRun = await world.queueRun({ commit: H2 });
    await world.updateRun(ownCommitRun.id, finished('succeeded', { metrics: { loss: 0.25 } }));
    world.double.failNext(COMPARE, { status: 502, times: 10_000 });
    let logs = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs += chunk.toString();
        callback();
      },
    });
    const outbox = await world.openOutbox({ logger: pino({ level: 'warn' }, sink) });

    const run = await finishedPullRequestRun();
    await outbox.notifyRun(run.id);
    const done = await waitFor(
      'completed',
      () => world.checkRunsOf(run.id)[0]?.conclusion === 'success' && world.checkRunsOf(run.id)[0],
      30_000,
    );
    expect(await runRow(run.id)).toMatchObject({
      baselineFixed: true,
      baselineRunId: ownCommitRun.id,
      baselineCommits: null,
      baselineLookupFailures: BASELINE_LOOKUP_ATTEMPTS,
    });
    // Once fixed, nothing is looked up again.
    expect(requestsTo(COMPARE)).toBe(BASELINE_LOOKUP_ATTEMPTS);
    expect(done.output.summary).toContain(ownCommitRun.id);
    expect(logs).toContain(
      `GitHub did not say where this run's baseline may be in ${BASELINE_LOOKUP_ATTEMPTS} tries; it is fixed from the run's own commit`,
    );
  });

  test('a refusal for good fixes the baseline from the run’s own commit at once', async () => {
    const ownCommitRun = await world.queueRun({ commit: H2 });
    await world.updateRun(ownCommitRun.id, finished('succeeded'));
    world.double.failNext(COMPARE, {
      status: 403,
      body: { message: 'Resource not accessible by integration' },
    });
    const outbox = await world.openOutbox();
    const run = await finishedPullRequestRun();
    await outbox.notifyRun(run.id);
    const fixed = await waitFor('fixed', async () => {
      const row = await runRow(run.id);
      return row.baselineFixed && row;
    });
    expect(fixed).toMatchObject({ baselineRunId: ownCommitRun.id, baselineLookupFailures: 1 });
  });
});
