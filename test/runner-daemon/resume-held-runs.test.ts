import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { StaleLeaseError } from '../../client/control-plane-errors.js';
import { HeldRuns } from '../../runner/daemon/held-runs.js';
import { resumeHeldRuns } from '../../runner/daemon/resume-held-runs.js';
import { runs } from '../../schemas/tables/runs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';

const DIGEST = 'd'.repeat(64);

let database: TestDatabase;
let plane: TestControlPlane;
let submitter: string;
let client: ControlPlaneClient;
let workDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const { token } = await plane.addRunner({ name: 'gpu-box' });
  client = new ControlPlaneClient({ url: plane.url, token, retries: 0 });
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-resume-held-'));
});
afterEach(async () => {
  await plane.close();
  await rm(workDir, { recursive: true, force: true });
});

/** A run submitted, claimed and started by the runner, recorded as held in its work directory. */
async function heldRun(): Promise<{ run: RunLease; heldRuns: HeldRuns }> {
  expect((await plane.submit(submitter, {})).status).toBe(201);
  const claim = await client.claim(0, false);
  if (!claim) throw new Error('nothing to claim');
  const run = { runId: claim.run.id, lease: claim.lease };
  await client.start(run, { codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) });
  const heldRuns = new HeldRuns(workDir);
  await heldRuns.record({ runId: run.runId, attempt: claim.run.attempt, lease: run.lease, slot: 0 });
  return { run, heldRuns };
}

function resumeAll(heldRuns: HeldRuns) {
  return resumeHeldRuns({
    client,
    heldRuns,
    workDir,
    canResume: true,
    logger: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    maxBackoffMs: 1000,
  });
}

async function statusOf(runId: string): Promise<string | undefined> {
  const [row] = await database.db.select({ status: runs.status }).from(runs).where(eq(runs.id, runId));
  return row?.status;
}

test('a resumed run comes back with the epoch its writes carry from then on; the writes of the process that died are refused', async () => {
  const { run, heldRuns } = await heldRun();
  const [resumed] = await resumeAll(heldRuns);
  expect(resumed).toMatchObject({ claim: { lease: run.lease }, nextSeq: 0, epoch: 1 });
  const fenced = { ...run, epoch: resumed?.epoch };
  expect(await client.heartbeat(fenced)).toMatchObject({ cancel: false });
  await expect(client.heartbeat(run)).rejects.toBeInstanceOf(StaleLeaseError);
});

test('a run resumed before, killed again with a cancel pending, is given back under the epoch recorded: it ends as the cancel asked', async () => {
  const { run, heldRuns } = await heldRun();
  // The runner's first restart resumed it and recorded the epoch; then it died again.
  const [first] = await resumeAll(heldRuns);
  await heldRuns.record({ runId: run.runId, attempt: 1, lease: run.lease, epoch: first?.epoch, slot: 0 });
  const cancel = await plane.call('POST', `/api/v1/runs/${run.runId}/cancel`, {
    token: submitter,
    json: { reason: 'Cancelled by alice' },
  });
  expect(cancel.status).toBeLessThan(300);

  expect(await resumeAll(heldRuns)).toEqual([]);
  expect(await statusOf(run.runId)).toBe('cancelled');
  expect((await heldRuns.list()).held).toEqual([]);
});
