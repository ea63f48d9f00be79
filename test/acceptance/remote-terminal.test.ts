import { afterAll, afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { hasColor, runInTerminal } from '../helpers/terminal-process.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

// A control plane, a runner and a laptop's terminal, each a real process.
vi.setConfig({ testTimeout: 180_000 });

let database: TestDatabase;
let world: ControlPlaneWorld;

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
  await world.close();
});

const SLOW = `version: 1
stages:
  train:
    cmd: echo "epoch 1" && echo "epoch 2" && sleep 120
    cache: false
`;

/** A repository that is its own origin, pushed, with a token and a runner for it. */
async function laptopProject() {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': SLOW });
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await project.repo.git('fetch', '-q', 'origin');
  await world.allow([project.repository]);
  await world.runner('cpu-box');
  return project;
}

test("submit --wait streams the stage's lines, and Ctrl-C cancels the run on the control plane and waits for it to end", async () => {
  const project = await laptopProject();
  const submit = runInTerminal(['submit', '--wait'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken, NO_COLOR: '1' },
    columns: 70,
  });
  const queued = await submit.waitFor(/^queued \w{26}/);
  const runId = /^queued (\w{26})/.exec(queued)?.[1] ?? '';
  await submit.waitFor(/train │ epoch 2/, 120_000);
  submit.type('\x03');
  await submit.waitFor(/Cancelling the run on the control plane/);
  expect(await submit.exited, submit.output()).toBe(1);
  expect(submit.output()).toMatch(/⊘ cancelled\s+train/);
  expect(
    submit
      .output()
      .split('\n')
      .filter((line) => line.includes('│ epoch 1')),
  ).toHaveLength(1);
  expect(hasColor(submit.output())).toBe(false);
  const row = await world.row(runId);
  expect(row.status).toBe('cancelled');
  expect(row.statusReason).toContain('Ctrl-C');
});

test('fluksio cancel waits for a running run to end, or says it is still stopping', async () => {
  const project = await laptopProject();
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  await world.waitFor(runId, (report) => report.stages.some((stage) => stage.status === 'running'));
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };

  const noWait = spawnFluksio(['cancel', runId, '--wait', '0'], { cwd: project.repo.dir, env });
  expect(await noWait.exited, noWait.output()).toBe(1);
  expect(noWait.output()).toContain(`${runId}: still stopping after 0s`);

  const waited = spawnFluksio(['cancel', runId], { cwd: project.repo.dir, env });
  expect(await waited.exited, waited.output()).toBe(0);
  expect(waited.output()).toMatch(new RegExp(`^${runId}: cancelled`));
  expect((await world.row(runId)).status).toBe('cancelled');
});
