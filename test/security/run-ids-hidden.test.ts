import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

// Issue 9, item 8 (its last sentence): a runner token, or an API token of another
// repository, probing run ids learns nothing — another's run is answered exactly as a run
// that does not exist: 404 "There is no run …", never 403 "not held by".

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start();
});
afterEach(async () => {
  await world.close();
});

async function runnerToken(name: string, labels: string[]): Promise<string> {
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  await createRunner({
    db: database.db,
    name,
    owner: 'local',
    labels,
    repositories: [],
    tokenHash: hashToken(token),
  });
  return token;
}

/** Status and body of a request, the body with the run id made generic. */
async function answer(
  method: string,
  path: string,
  token: string,
  options: { json?: unknown; headers?: Record<string, string>; runId: string },
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${world.app.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
  });
  return { status: response.status, body: (await response.text()).replaceAll(options.runId, 'RUN') };
}

test("another runner's run and another repository's run answer exactly as a run that does not exist", async () => {
  const { repository, commit, cloneUrl } = await world.repo({ 'fluksio.yml': 'version: 1\nstages: {}\n' });
  await world.allow([repository]);
  const owner = await runnerToken('owner', ['gpu']);
  const prober = await runnerToken('prober', ['gpu']);
  const runId = await world.submit({ repository, commit, cloneUrl, labels: ['gpu'] });
  const claimed = await fetch(`${world.app.url}/api/v1/runner/claim`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
    body: JSON.stringify({ waitSeconds: 5 }),
  });
  const claim = (await claimed.json()) as Claim;
  expect(claim.run.id).toBe(runId);
  const missing = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
  const outsider = `fxt_${randomBytes(32).toString('base64url')}`;
  await createApiToken({
    db: database.db,
    name: 'outsider',
    repositories: ['local/elsewhere'],
    scope: 'submit',
    tokenHash: hashToken(outsider),
  });

  const probes = (id: string) => {
    const lease = { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': id };
    const blob = `/api/v1/blobs/sha256:${'d'.repeat(64)}`;
    return [
      answer('POST', `/api/v1/runs/${id}/heartbeat`, prober, { json: { lease: claim.lease }, runId: id }),
      answer('POST', `/api/v1/runs/${id}/finish`, prober, {
        json: { lease: claim.lease, status: 'failed', reason: 'mine', metrics: {} },
        runId: id,
      }),
      answer('GET', `/api/v1/runs/${id}/cache/${'e'.repeat(64)}`, prober, { headers: lease, runId: id }),
      answer('HEAD', blob, prober, { headers: lease, runId: id }),
      answer('GET', `/api/v1/runs/${id}`, outsider, { runId: id }),
      answer('GET', `/api/v1/runs/${id}/logs/train`, outsider, { runId: id }),
      answer('POST', `/api/v1/runs/${id}/cancel`, outsider, { json: {}, runId: id }),
      answer('GET', `${blob}?run=${id}`, outsider, { runId: id }),
    ];
  };
  const held = await Promise.all(probes(runId));
  const unknown = await Promise.all(probes(missing));
  expect(held).toEqual(unknown);
  for (const probe of held) expect(probe.status).toBe(404);
  expect(held[0]?.body).toBe('{"error":"There is no run RUN","field":"id"}');
  // Nothing the probes sent changed the run.
  expect(await world.row(runId)).toMatchObject({
    status: 'running',
    runnerName: 'owner',
    leaseId: claim.lease,
  });
});
