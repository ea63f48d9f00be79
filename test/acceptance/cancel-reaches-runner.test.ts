import { afterAll, afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { removeDir, startApp, type AppProcess } from '../helpers/control-plane-processes.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';
import { waitFor } from '../helpers/wait-for.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

// Two control plane processes, a runner and `fluksio cancel`, each a real process.
vi.setConfig({ testTimeout: 180_000 });

/** Heartbeats two minutes apart: a cancel that arrives sooner did not come with one. */
const HEARTBEAT_MS = 120_000;
const SETTINGS = {
  FLUKSIO_HEARTBEAT_INTERVAL: '2m',
  FLUKSIO_LEASE_TTL: '5m',
  // Parked claims and watches read PostgreSQL again only once a minute: wake-ups come from Redis.
  FLUKSIO_CLAIM_RECHECK: '1m',
};
/** How long the stage sleeps: a number no other test sleeps for (sleeperAlive). */
const MARKER = 7919;

let database: TestDatabase;
let world: ControlPlaneWorld;
let second: AppProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await second?.stop('SIGKILL');
  if (second) await removeDir(second.dataDir);
  second = undefined;
  await world.close();
});

test('fluksio cancel through one control plane stops the stage of a runner attached to another, long before a heartbeat could have', async () => {
  await world.start(SETTINGS);
  // The runner talks to the second process only; the cancel goes to the first.
  second = await startApp({
    databaseUrl: database.url,
    prefix: world.app.env.FLUKSIO_QUEUE_PREFIX,
    env: SETTINGS,
  });
  const project = await world.repo({
    'fluksio.yml': `version: 1\nstages:\n  train:\n    cmd: echo started && sleep ${MARKER}\n    cache: false\n`,
  });
  await world.allow([project.repository]);
  const runner = await world.runner('box', { url: second.url });

  const submittedAt = Date.now();
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  await waitFor('the stage to sleep', () => sleeperAlive(MARKER), 90_000);

  const cancel = spawnFluksio(['cancel', runId, '--wait', '90'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await cancel.exited, cancel.output()).toBe(0);
  const endedAt = Date.now();
  expect(cancel.output()).toMatch(new RegExp(`^${runId}: cancelled`));
  expect(await sleeperAlive(MARKER)).toBe(false);
  expect((await world.row(runId)).status).toBe('cancelled');
  // The claim came after the submit, and its first heartbeat at once: the next one could not
  // have come before submit + interval, and the run ended before then.
  expect(endedAt - submittedAt).toBeLessThan(HEARTBEAT_MS);
  expect(runner.output()).toMatch(/"via":"watch"[^\n]*"msg":"the control plane stopped the run"/);
});
