import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { inQueue, jobFields, startSlurm, waitFor } from './slurm-job.js';

/** The bound: from the cancel's request to the job cancelled in Slurm. */
const CANCEL_BOUND_MS = 5_000;

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  await startSlurm();
  database = await createTestDatabase();
}, 120_000);
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/** The id of the Slurm job the stage's log names once the runner submitted it, or ''. */
async function submittedJob(runId: string): Promise<string> {
  const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/long`, {
    headers: { authorization: `Bearer ${world.apiToken}` },
  });
  if (!response.ok) return '';
  const { lines } = (await response.json()) as { lines: string[] };
  for (const line of lines) {
    const job = /^fluksio: submitted Slurm job (\d+)$/.exec(line)?.[1];
    if (job) return job;
  }
  return '';
}

test('a cancel through the control plane reaches the Slurm job (CANCELLED) within 5 s of the request, with heartbeats minutes apart', async () => {
  await world.start({
    // Only the runner's watch can bring the cancel within the bound.
    FLUKSIO_HEARTBEAT_INTERVAL: '2m',
    FLUKSIO_LEASE_TTL: '5m',
  });
  const project = await world.repo({
    'fluksio.yml': `version: 1\nstages:\n  long:\n    cmd: echo running && sleep 300\n    cache: false\n`,
  });
  await world.allow([project.repository]);
  const runner = await world.runner('slurm-box', { args: ['--backend', 'slurm'] });
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  let job = '';
  await waitFor('the job to be submitted', async () => (job = await submittedJob(runId)) !== '', 90_000);
  await waitFor('the job to run', async () => (await jobFields(job)).JobState === 'RUNNING', 60_000);

  const requestedAt = Date.now();
  const cancel = await fetch(`${world.app.url}/api/v1/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.apiToken}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(cancel.status).toBe(200);
  await waitFor(
    'the job to be cancelled',
    async () => (await jobFields(job)).JobState === 'CANCELLED',
    CANCEL_BOUND_MS,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${runner.output().slice(-3000)}`);
  });
  expect(Date.now() - requestedAt).toBeLessThan(CANCEL_BOUND_MS);

  const ended = await world.waitFor(runId);
  expect(ended.run.status).toBe('cancelled');
  expect(ended.stages).toMatchObject([{ name: 'long', status: 'cancelled' }]);
  expect(runner.output()).toMatch(/"via":"watch"[^\n]*"msg":"the control plane stopped the run"/);
  // Leaving the queue waits for slurmd's clean-up, which a loaded machine may stretch.
  await waitFor('the job to leave the queue', async () => !(await inQueue(job)), 30_000);
}, 180_000);
