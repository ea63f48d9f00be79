import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';
import { startDyingFront, type DyingFront } from './dying-front.js';

/**
 * A control plane's answer to a HEAD that is an error (a balancer's 502 while a replica is
 * gone, a 503 while one starts) is one more transient failure, retried like any other: the
 * runner process must neither die of it nor wait on it for ever.
 */

let database: TestDatabase;
let world: ControlPlaneWorld;
let front: DyingFront | null = null;

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
  await front?.close();
  front = null;
  await world.close();
});

const PIPELINE = {
  'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo trained > model.txt
    outs: [model.txt]
`,
  '.gitignore': 'model.txt\n',
};

test('a HEAD answered 502 (a replica gone behind the balancer) is retried: the runner process lives on and the run succeeds', async () => {
  await world.start();
  const project = await world.repo(PIPELINE);
  await world.allow([project.repository]);
  // No kill: the one request is answered 502, every later one reaches the control plane.
  front = await startDyingFront(
    () => world.app.url,
    (method, url) => method === 'HEAD' && url.startsWith('/api/v1/blobs/'),
    () => Promise.resolve(),
  );
  const runner = await world.runner('box', { url: front.url });
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  const report = await world.waitFor(runId);
  expect(report.run.status, `${report.run.reason}\n${runner.output().slice(-3000)}`).toBe('succeeded');
  expect(runner.child.exitCode).toBeNull();
  expect(front.triggered()).toBeGreaterThan(1);
});
