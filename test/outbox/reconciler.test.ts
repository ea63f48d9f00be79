import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { GitHubOutbox } from '../../app/github/outbox/outbox.js';
import { bumpRenderVersion } from '../../store/outbox/bump-render-version.js';
import { removeKeys } from '../app/control-plane-harness.js';
import {
  closeOutboxDatabase,
  FAST_SETTINGS,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from './outbox-fixture.js';
import { pino } from 'pino';

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

describe('the reconciler', () => {
  test('a job lost with Redis’s keys is queued again: the final state still arrives', async () => {
    const notifier = await world.openOutbox({ start: false });
    const run = await world.queueRun();
    await world.updateRun(run.id, finished('succeeded', { startedAt: new Date() }));
    await notifier.notifyRun(run.id);
    await removeKeys(world.redis, world.prefix);

    await world.openOutbox({ settings: { reconcileIntervalMs: 300 } });
    const [checkRun] = await waitFor('the check run', () => {
      const found = world.checkRunsOf(run.id);
      return found.length > 0 && found;
    });
    expect(checkRun).toMatchObject({ status: 'completed', conclusion: 'success' });
  });

  test('a flushed Redis loses the schedule too; it is ensured again and the change is sent', async () => {
    await world.openOutbox({ settings: { reconcileIntervalMs: 300 } });
    const run = await world.queueRun();
    await removeKeys(world.redis, world.prefix);
    // A change recorded while its notify could not queue a job.
    await bumpRenderVersion({ db: world.db, target: { kind: 'check', id: run.id } });
    await waitFor('the check run', () => world.checkRunsOf(run.id).length === 1);
  });

  test('a final state whose render bump was lost (the process died between the two) still reaches GitHub', async () => {
    await world.openOutbox({ settings: { reconcileIntervalMs: 300, driftGraceMs: 200 } });
    const run = await world.queueRun();
    await waitFor('the queued check run', () => world.checkRunsOf(run.id)[0]?.status === 'queued');
    // The run finishes, and nothing tells the outbox.
    await world.updateRun(run.id, finished('failed', { startedAt: new Date() }));
    const [checkRun] = await waitFor('the completed check run', () => {
      const found = world.checkRunsOf(run.id);
      return found[0]?.status === 'completed' && found;
    });
    expect(checkRun).toMatchObject({ conclusion: 'failure' });
    expect(world.checkRunsOf(run.id)).toHaveLength(1);
  });

  test('a notify while Redis is unreachable returns, bumps the render version and never throws', async () => {
    const run = await world.queueRun();
    const before = await world.checkRow(run.id);
    const outbox = new GitHubOutbox({
      db: world.db,
      redisUrl: 'redis://127.0.0.1:1',
      queuePrefix: world.prefix,
      github: world.github,
      settings: { ...FAST_SETTINGS, enqueueTimeoutMs: 200 },
      logger: pino({ level: 'silent' }),
    });
    try {
      const started = Date.now();
      await expect(outbox.notifyRun(run.id)).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await world.checkRow(run.id)).renderVersion).toBe(before.renderVersion + 1);
    } finally {
      await outbox.close();
    }
  });
});
