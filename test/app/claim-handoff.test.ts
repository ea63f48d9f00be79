import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ulid } from 'ulid';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ClaimHandoff } from '../../app/claim-handoff.js';
import * as tables from '../../schemas/tables/index.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { preparingStatements } from '../../store/db/preparing-statements.js';
import { removeRunner } from '../../store/runners/remove-runner.js';
import { createRun } from '../../store/runs/create-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';

let database: TestDatabase;
let plane: TestControlPlane;
let submitter: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  // Re-checks a minute apart: what a parked claim gets, it gets from a submit.
  plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_CLAIM_RECHECK: '1m' } });
  submitter = await plane.addApiToken({ repositories: ['acme/model'] });
});
afterEach(async () => {
  await plane.close();
});

async function runRow(id: string): Promise<Run> {
  const [run] = await database.db.select().from(runs).where(eq(runs.id, id));
  if (!run) throw new Error(`no run ${id}`);
  return run;
}

/** Waits until `count` claims are parked in the plane (its `fluksio_claims_parked` gauge). */
async function parked(count: number): Promise<void> {
  await waitFor(`${count} parked claims`, async () => {
    const { text: scrape } = await plane.call('GET', '/metrics');
    return new RegExp(`^fluksio_claims_parked ${count}$`, 'm').test(scrape);
  });
}

/** The run id of a submit's answer. */
function idOf(submitted: { json: Record<string, unknown> }): string {
  return (submitted.json.run as { id: string }).id;
}

describe('a run submitted while a claim is parked in the same process', () => {
  test("is leased to that claim by the submit's own insert: claimed when it was queued, answered running", async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const waiting = plane.claim(token, 30);
    await parked(1);
    const submitted = await plane.submit(submitter, {});
    expect(submitted.status).toBe(201);
    expect(submitted.json.run).toMatchObject({ status: 'running' });
    const claim = await waiting;
    if (!claim) throw new Error('nothing claimed');
    expect(claim.run.id).toBe(idOf(submitted));
    const row = await runRow(claim.run.id);
    expect(row).toMatchObject({
      status: 'running',
      runnerName: 'box',
      leaseId: claim.lease,
      statusReason: null,
    });
    // One statement: the claim's time is the queueing's own.
    expect(row.claimedAt?.getTime()).toBe(row.queuedAt.getTime());
    expect((row.leaseExpiresAt?.getTime() ?? 0) - row.queuedAt.getTime()).toBe(plane.settings.leaseTtlMs);
    // The lease it got is a real one: the run starts under it.
    const heartbeat = await plane.call('POST', `/api/v1/runs/${claim.run.id}/heartbeat`, {
      token,
      json: { lease: claim.lease },
    });
    expect(heartbeat.status).toBe(200);
  });

  test('more claims parked than Node allows listeners by default: no leak warning, and each gets a run', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const tokens = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => (await plane.addRunner({ name: `box-${i}` })).token),
      );
      const waiting = tokens.map((token) => plane.claim(token, 30));
      await parked(12);
      for (let i = 0; i < 12; i += 1) expect((await plane.submit(submitter, {})).status).toBe(201);
      const claimed = await Promise.all(waiting);
      expect(new Set(claimed.map((claim) => claim?.run.id)).size).toBe(12);
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('an older queued run the runner may take comes first (FIFO): the new run is queued', async () => {
    const { token } = await plane.addRunner({ name: 'box' });
    const waiting = plane.claim(token, 30);
    await parked(1);
    // Straight into Postgres, no ring: the parked claim has not seen it.
    const { run: older } = await createRun({
      db: database.db,
      run: {
        id: ulid(),
        repository: 'acme/model',
        pipelinePath: 'fluksio.yml',
        commit: COMMIT,
        params: {},
        paramsDigest: 'd'.repeat(64),
        status: 'queued',
        cloneUrl: 'https://github.com/acme/model.git',
      },
    });
    const submitted = await plane.submit(submitter, {});
    expect((await waiting)?.run.id).toBe(older.id);
    expect(await runRow(idOf(submitted))).toMatchObject({ status: 'queued', leaseId: null });
  });

  test('is not leased to a claim whose runner was removed while it waited, nor to one that may not take it', async () => {
    const removed = await plane.addRunner({ name: 'removed' });
    const cpu = await plane.addRunner({ name: 'cpu', labels: ['cpu'] });
    const removedClaim = plane.claim(removed.token, 2);
    const cpuClaim = plane.claim(cpu.token, 2);
    await parked(2);
    await removeRunner({ db: database.db, name: 'removed' });
    const submitted = await plane.submit(submitter, { labels: ['gpu'] });
    const gpuOnly = await runRow(idOf(submitted));
    expect(gpuOnly).toMatchObject({ status: 'queued', leaseId: null, runnerName: null });
    const anyRunner = await plane.submit(submitter, {});
    // The claim that may take it gets it; the removed runner's gets nothing.
    expect((await cpuClaim)?.run.id).toBe(idOf(anyRunner));
    expect(await runRow(idOf(anyRunner))).toMatchObject({ status: 'running', runnerName: 'cpu' });
    expect(await removedClaim).toBeNull();
  });
});

describe('a submit whose insert committed but whose answer was lost', () => {
  test('the parked claim still gets the run leased to it, rather than answering 204', async () => {
    const client = postgres(database.url, { max: 4, onnotice: () => {} });
    let loseNextRunsInsert = false;
    // Lets the INSERT commit, then loses its answer, as a connection reset after COMMIT would.
    const losing = new Proxy(client, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (property !== 'unsafe') return typeof value === 'function' ? value.bind(target) : value;
        return (query: string, parameters?: unknown[], options?: object) => {
          const result = target.unsafe(query, parameters as never, options);
          if (!loseNextRunsInsert || !/^(with .*)?insert into "runs"/s.test(query)) return result;
          loseNextRunsInsert = false;
          const lost = (): never => {
            throw new Error('write ECONNRESET');
          };
          const answer = result.then(lost);
          answer.catch(() => {}); // drizzle reads .values() instead: this one is never awaited
          return Object.assign(answer, { values: () => result.values().then(lost) });
        };
      },
    });
    await plane.close();
    plane = await startTestControlPlane({
      db: drizzle({ client: preparingStatements(losing), schema: tables }),
      env: { FLUKSIO_CLAIM_RECHECK: '1m' },
    });
    try {
      submitter = await plane.addApiToken({ repositories: ['acme/model'] });
      const { token } = await plane.addRunner({ name: 'box' });
      const waiting = plane.claim(token, 20);
      await parked(1);
      loseNextRunsInsert = true;
      expect((await plane.submit(submitter, {}, 'lost-answer')).status).toBe(500);
      const claim = await waiting;
      if (!claim) throw new Error('the claim answered 204 while its run was leased to it');
      expect(await runRow(claim.run.id)).toMatchObject({
        status: 'running',
        runnerName: 'box',
        leaseId: claim.lease,
      });
      // The submitter's retry finds the run that was made.
      const again = await plane.submit(submitter, {}, 'lost-answer');
      expect(idOf(again)).toBe(claim.run.id);
    } finally {
      await plane.close();
      plane = await startTestControlPlane({ db: database.db });
      await client.end();
    }
  });
});

function runner(name: string, fields: Partial<RunnerRow> = {}): RunnerRow {
  return {
    id: name,
    name,
    owner: 'acme',
    repositories: [],
    labels: [],
    tokenHash: name,
    acceptsForks: false,
    createdAt: new Date(),
    lastSeenAt: null,
    ...fields,
  } as RunnerRow;
}

function leased(leaseId: string): Run {
  return { id: 'r', status: 'running', leaseId } as Run;
}

const noLease = (): Promise<Run | null> => Promise.resolve(null);

describe('ClaimHandoff', () => {
  const scope = { labels: ['gpu'], repository: 'Acme/Model', fork: false };

  test('offers the oldest parked claim whose runner may take the run: labels, owner, repositories, forks', () => {
    const handoff = new ClaimHandoff(noLease);
    handoff.park(runner('no-gpu', { labels: ['cpu'] }), false, 'l0');
    handoff.park(runner('other-owner', { owner: 'globex', labels: ['gpu'] }), false, 'l1');
    handoff.park(runner('other-repo', { repositories: ['acme/data'], labels: ['gpu'] }), false, 'l2');
    handoff.park(runner('first', { repositories: ['ACME/model'], labels: ['gpu', 'a100'] }), false, 'l3');
    handoff.park(runner('second', { labels: ['gpu'] }), true, 'l4');
    expect(handoff.reserve({ ...scope, fork: true })?.taker.runnerName).toBe('second');
    expect(handoff.reserve(scope)?.taker.runnerName).toBe('first');
    expect(handoff.reserve(scope)).toBeNull();
  });

  test('a claim is never offered twice at once, and is offered again first when the run was not leased to it', () => {
    const handoff = new ClaimHandoff(noLease);
    handoff.park(runner('a', { labels: ['gpu'] }), false, 'la');
    handoff.park(runner('b', { labels: ['gpu'] }), false, 'lb');
    const first = handoff.reserve(scope);
    const second = handoff.reserve(scope);
    expect([first?.taker.runnerName, second?.taker.runnerName]).toEqual(['a', 'b']);
    expect(handoff.reserve(scope)).toBeNull();
    first?.complete(null);
    second?.complete(leased('lb'));
    expect(handoff.reserve(scope)?.taker.runnerName).toBe('a');
  });

  test('a claim that stops waiting while its run is being inserted still gets the run the insert leased to it', async () => {
    const handoff = new ClaimHandoff(noLease);
    const offer = handoff.park(runner('a', { labels: ['gpu'] }), false, 'la');
    const reservation = handoff.reserve(scope);
    const withdrawn = offer.withdraw();
    reservation?.complete(leased('la'));
    expect((await withdrawn)?.leaseId).toBe('la');
  });

  test('a claim that stopped waiting is not offered again when the run was queued instead, nor given a run leased to another', async () => {
    const handoff = new ClaimHandoff(noLease);
    const offer = handoff.park(runner('a', { labels: ['gpu'] }), false, 'la');
    const reservation = handoff.reserve(scope);
    const withdrawn = offer.withdraw();
    reservation?.complete(leased('someone-else'));
    expect(await withdrawn).toBeNull();
    expect(handoff.reserve(scope)).toBeNull();
  });

  test('the parked claim wakes when a run was handed to it', async () => {
    const handoff = new ClaimHandoff(noLease);
    const offer = handoff.park(runner('a'), false, 'la');
    handoff.reserve({ labels: [], repository: 'acme/model', fork: false })?.complete(leased('la'));
    await offer.handed;
    expect((await offer.withdraw())?.leaseId).toBe('la');
  });

  test('when the insert failed (it may have committed), the claim wakes, reads what its lease holds, and is not offered again under it', async () => {
    const looked: string[] = [];
    const handoff = new ClaimHandoff((leaseId) => {
      looked.push(leaseId);
      return Promise.resolve(leased(leaseId));
    });
    const offer = handoff.park(runner('a', { labels: ['gpu'] }), false, 'la');
    handoff.reserve(scope)?.fail();
    await offer.handed;
    expect((await offer.withdraw())?.leaseId).toBe('la');
    expect(looked).toEqual(['la']);
    expect(handoff.reserve(scope)).toBeNull();
  });
});
