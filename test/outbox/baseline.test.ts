import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
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
