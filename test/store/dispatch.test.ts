import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { claimNextRun } from '../../store/leases/claim-next-run.js';
import type { Database } from '../../store/db/database.js';
import { removeRunner } from '../../store/runners/remove-runner.js';
import { requestCancel } from '../../store/runs/request-cancel.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  backdate,
  claim,
  newLeaseId,
  queueRun,
  readRun,
  registerRunner,
  uniqueOwner,
} from './control-plane-fixtures.js';

describe.each(databaseBackends)('dispatch on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  test('a runner takes only runs whose labels it all carries', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const gpu = await queueRun(db, { repository, labels: ['gpu'] });
    const a100 = await queueRun(db, { repository, labels: ['gpu', 'a100'] });
    const any = await queueRun(db, { repository, labels: [] });

    const cpu = await registerRunner(db, { owner, labels: ['cpu'] });
    expect((await claim(db, cpu))?.id).toBe(any.id);
    expect(await claim(db, cpu)).toBeNull();

    const plainGpu = await registerRunner(db, { owner, labels: ['gpu', 'linux'] });
    expect((await claim(db, plainGpu))?.id).toBe(gpu.id);
    expect(await claim(db, plainGpu)).toBeNull();

    const bigGpu = await registerRunner(db, { owner, labels: ['a100', 'gpu'] });
    expect((await claim(db, bigGpu))?.id).toBe(a100.id);
  });

  test('the claim leases the run to the runner, by the database clock', async () => {
    const owner = uniqueOwner();
    const queued = await queueRun(db, { repository: `${owner}/train`, statusReason: 'Waiting for a runner' });
    const runner = await registerRunner(db, { owner, name: `gpu-box-${randomBytes(3).toString('hex')}` });
    const leaseId = newLeaseId();
    const claimed = await claimNextRun({ db, runner, acceptForks: false, leaseId, leaseTtlMs: 60_000 });
    expect(claimed).toMatchObject({
      id: queued.id,
      status: 'running',
      statusReason: null,
      leaseId,
      runnerName: runner.name,
      startedAt: null,
      attempt: 1,
    });
    const leaseMs = (claimed?.leaseExpiresAt?.getTime() ?? 0) - (claimed?.claimedAt?.getTime() ?? 0);
    expect(leaseMs).toBe(60_000);
  });

  test("a runner takes only its owner's runs, and only its repositories when it lists any", async () => {
    const owner = uniqueOwner();
    const other = await queueRun(db, { repository: `${uniqueOwner()}/train` });
    const first = await queueRun(db, { repository: `${owner}/first` });
    const second = await queueRun(db, { repository: `${owner}/second` });
    const nested = await queueRun(db, { repository: `${owner}/group/third` });

    const onlySecond = await registerRunner(db, { owner, repositories: [`${owner}/Second`] });
    expect((await claim(db, onlySecond))?.id).toBe(second.id);
    expect(await claim(db, onlySecond)).toBeNull();

    const wholeOwner = await registerRunner(db, { owner: owner.toUpperCase() });
    expect((await claim(db, wholeOwner))?.id).toBe(first.id);
    expect((await claim(db, wholeOwner))?.id).toBe(nested.id);
    expect(await claim(db, wholeOwner)).toBeNull();
    expect((await readRun(db, other.id)).status).toBe('queued');
  });

  test('a fork run goes only to a runner that accepts forks', async () => {
    const owner = uniqueOwner();
    const fork = await queueRun(db, { repository: `${owner}/train`, fork: true, trustDomain: 'pr:7' });
    const runner = await registerRunner(db, { owner });
    expect(await claim(db, runner)).toBeNull();
    const taken = await claim(db, runner, { acceptForks: true });
    expect(taken?.id).toBe(fork.id);
    expect(taken?.fork).toBe(true);
  });

  test('runs are taken oldest first, and a run that waited is not passed over by newer ones', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const gpuOld = await queueRun(db, { repository, labels: ['gpu'] });
    const cpuOld = await queueRun(db, { repository });
    const gpuNew = await queueRun(db, { repository, labels: ['gpu'] });
    const cpuNew = await queueRun(db, { repository });
    // Created later, but queued before the others: creation time orders the queue.
    const earliest = await queueRun(db, { repository, labels: ['gpu'] });
    await backdate(db, earliest.id, 'createdAt', 60_000);

    const cpu = await registerRunner(db, { owner });
    const gpu = await registerRunner(db, { owner, labels: ['gpu'] });
    expect((await claim(db, cpu))?.id).toBe(cpuOld.id);
    expect((await claim(db, gpu))?.id).toBe(earliest.id);
    expect((await claim(db, gpu))?.id).toBe(gpuOld.id);
    expect((await claim(db, gpu))?.id).toBe(gpuNew.id);
    expect((await claim(db, gpu))?.id).toBe(cpuNew.id);
  });

  test('a run whose cancel was asked, or a removed runner, takes nothing', async () => {
    const owner = uniqueOwner();
    const queued = await queueRun(db, { repository: `${owner}/train` });
    const runner = await registerRunner(db, { owner });
    expect(await removeRunner({ db, name: runner.name })).toBe(true);
    expect(await claim(db, runner)).toBeNull();

    await requestCancel({ db, runId: queued.id, reason: 'Cancelled by alice' });
    const again = await registerRunner(db, { owner });
    expect(await claim(db, again)).toBeNull();
    expect((await readRun(db, queued.id)).status).toBe('cancelled');
  });
});

describe('dispatch under concurrency on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  test('20 concurrent claimers on 200 runs: every run is claimed exactly once', async () => {
    const { db } = database;
    const owner = uniqueOwner();
    const queued = new Set<string>();
    for (let index = 0; index < 200; index++) {
      queued.add((await queueRun(db, { repository: `${owner}/sweep`, groupIndex: index })).id);
    }
    const runners = await Promise.all(
      Array.from({ length: 20 }, (_, index) => registerRunner(db, { owner, name: `${owner}-${index}` })),
    );
    const claimedBy = new Map<string, string[]>();
    await Promise.all(
      runners.map(async (runner) => {
        for (;;) {
          const run = await claim(db, runner);
          if (!run) return;
          claimedBy.set(run.id, [...(claimedBy.get(run.id) ?? []), runner.name]);
        }
      }),
    );
    expect(claimedBy.size).toBe(200);
    expect([...claimedBy.values()].every((holders) => holders.length === 1)).toBe(true);
    expect(new Set(claimedBy.keys())).toEqual(queued);
    // Each run is leased to the runner that got it, and only to it.
    for (const [runId, [holder]] of claimedBy) {
      expect((await readRun(db, runId)).runnerName).toBe(holder);
    }
    // More than one claimer did some of the work: the claims really overlapped.
    expect(new Set([...claimedBy.values()].map(([holder]) => holder)).size).toBeGreaterThan(1);
  });

  test('a queued run another write holds locked for a moment (its reason, its baseline) is still claimed, not passed over', async () => {
    const { db, url } = database;
    const owner = uniqueOwner();
    const queued = await queueRun(db, { repository: `${owner}/train` });
    const runner = await registerRunner(db, { owner });
    const writer = postgres(url, { max: 1, onnotice: () => {} });
    try {
      let claiming: Promise<Awaited<ReturnType<typeof claim>>> | undefined;
      await writer.begin(async (tx) => {
        await tx`update runs set status_reason = 'Queued' where id = ${queued.id}`;
        claiming = claim(db, runner);
        // The claim waits for this write's lock rather than answering that nothing is queued.
        await waitFor('the claim to wait for the lock', async () => {
          const [waiting] = await tx`select count(*)::int as n from pg_locks where not granted`;
          return (waiting?.n ?? 0) > 0;
        });
      });
      expect((await claiming)?.id).toBe(queued.id);
    } finally {
      await writer.end();
    }
  });

  test('a queued run locked for longer than the claim waits is left for the next look, and nothing else is taken', async () => {
    const { db, url } = database;
    const owner = uniqueOwner();
    const queued = await queueRun(db, { repository: `${owner}/train` });
    const runner = await registerRunner(db, { owner });
    const writer = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await writer.begin(async (tx) => {
        await tx`select id from runs where id = ${queued.id} for update`;
        expect(await claim(db, runner)).toBeNull();
      });
      expect((await claim(db, runner))?.id).toBe(queued.id);
    } finally {
      await writer.end();
    }
  });
});
