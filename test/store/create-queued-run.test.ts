import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiTokens } from '../../schemas/tables/api-tokens.js';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { recordWaitingReasons } from '../../store/leases/record-waiting-reasons.js';
import { createQueuedRun } from '../../store/runs/create-queued-run.js';
import { SubmitterRefusedError } from '../../store/runs/submitter-refused-error.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { claim, readRun, registerRunner, uniqueOwner } from './control-plane-fixtures.js';
import { makeRun } from './store-fixtures.js';

const ONLINE_WINDOW_MS = 120_000;

/** Queues a run as `POST /api/v1/runs` does: the row and its waiting reason in one INSERT. */
async function submit(
  db: Database,
  overrides: Partial<NewRun> & { repository: string },
): Promise<{ run: Run; created: boolean }> {
  return createQueuedRun({
    db,
    onlineWindowMs: ONLINE_WINDOW_MS,
    run: {
      ...makeRun({
        startedAt: null,
        codeDigest: null,
        envDigest: null,
        cloneUrl: `https://github.com/${overrides.repository}.git`,
        triggerKey: `submit:${overrides.repository}:${randomBytes(6).toString('hex')}`,
        ...overrides,
      }),
      status: 'queued',
    },
  });
}

describe.each(databaseBackends)('queueing a run with its waiting reason on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  test('the insert stores the reason the sweep gives, for every rule a runner is matched by', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const elsewhere = `${uniqueOwner()}/train`;
    await registerRunner(db, { owner, labels: ['gpu', 'linux'] });
    await registerRunner(db, { owner: owner.toUpperCase(), repositories: [`${owner}/other`] });
    const cases: [Partial<NewRun>, string][] = [
      [{ labels: ['gpu'] }, 'Queued'],
      [{ labels: ['gpu', 'a100'] }, 'Waiting for a runner labelled gpu, a100'],
      [{ labels: [] }, 'Queued'],
      [{ labels: [], repository: `${owner.toUpperCase()}/Other` }, 'Queued'],
      [{ labels: ['tpu'], repository: `${owner}/other` }, `Waiting for a runner labelled tpu`],
      [{ labels: [], fork: true }, `Waiting for a runner for ${repository} that accepts forks`],
      [{ labels: [], repository: elsewhere }, `Waiting for a runner for ${elsewhere}`],
    ];
    for (const [overrides, reason] of cases) {
      const { run, created } = await submit(db, { repository, ...overrides });
      expect(created).toBe(true);
      const stored = await readRun(db, run.id);
      expect(stored.statusReason).toBe(reason);
      expect(run.statusReason).toBe(stored.statusReason);
      // The sweep's rule finds nothing to change: the two expressions agree.
      expect(await recordWaitingReasons({ db, onlineWindowMs: ONLINE_WINDOW_MS, runIds: [run.id] })).toEqual(
        [],
      );
    }
  });

  test('a runner that accepts forks makes a fork run queued; a runner gone quiet makes none', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const box = await registerRunner(db, { owner });
    expect((await submit(db, { repository, fork: true, labels: [] })).run.statusReason).toBe(
      `Waiting for a runner for ${repository} that accepts forks`,
    );
    // The runner asks with --accept-forks (and takes the fork run it finds).
    await claim(db, { ...box, acceptsForks: false }, { acceptForks: true });
    expect((await submit(db, { repository, fork: true, labels: [] })).run.statusReason).toBe('Queued');
    const quiet = await createQueuedRun({
      db,
      onlineWindowMs: 0,
      run: {
        ...makeRun({ repository, labels: [], triggerKey: `submit:${repository}:quiet` }),
        status: 'queued',
      },
    });
    expect(quiet.run.statusReason).toBe(`Waiting for a runner for ${repository}`);
  });

  test('a trigger key already held returns the run holding it, its reason as it was', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const triggerKey = `submit:${repository}:retry`;
    const first = await submit(db, { repository, labels: ['gpu'], triggerKey });
    await registerRunner(db, { owner, labels: ['gpu'] });
    const again = await submit(db, { repository, labels: ['gpu'], triggerKey });
    expect(again).toMatchObject({ created: false, run: { id: first.run.id } });
    expect(again.run.statusReason).toBe('Waiting for a runner labelled gpu');
  });
});

describe.each(databaseBackends)('queueing a run checked against its API token on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function token(scope: 'read' | 'submit', repositories: string[]): Promise<string> {
    const tokenHash = randomBytes(32).toString('hex');
    await createApiToken({ db, name: `t-${tokenHash.slice(0, 8)}`, repositories, scope, tokenHash });
    return tokenHash;
  }

  async function queue(tokenHash: string, repository: string, triggerKey?: string) {
    // The token's row gives the run its trust domain and submitter.
    const {
      trustDomain: _trustDomain,
      submittedBy: _submittedBy,
      ...run
    } = makeRun({
      repository,
      startedAt: null,
      triggerKey: triggerKey ?? `submit:${repository}:${randomBytes(6).toString('hex')}`,
    });
    return createQueuedRun({
      db,
      onlineWindowMs: ONLINE_WINDOW_MS,
      submitter: { tokenHash },
      run: { ...run, status: 'queued' },
    });
  }

  test('a live submit token reaching the repository queues the run under its name', async () => {
    const repository = `${uniqueOwner()}/train`;
    const tokenHash = await token('submit', [repository]);
    const { run, created } = await queue(tokenHash, repository);
    expect(created).toBe(true);
    expect(run).toMatchObject({ trustDomain: 'trusted', submittedBy: `t-${tokenHash.slice(0, 8)}` });
  });

  test('a revoked, read-only, unknown or elsewhere-scoped token writes nothing, a held key included', async () => {
    const repository = `${uniqueOwner()}/train`;
    const live = await token('submit', [repository]);
    const held = await queue(live, repository);
    const revoked = await token('submit', [repository]);
    await db.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.tokenHash, revoked));
    const refused = [
      revoked,
      await token('read', [repository]),
      'f'.repeat(64),
      await token('submit', ['x/y']),
    ];
    for (const tokenHash of refused) {
      await expect(queue(tokenHash, repository)).rejects.toBeInstanceOf(SubmitterRefusedError);
      // Its retry of a run another token made does not answer that run.
      await expect(queue(tokenHash, repository, held.run.triggerKey ?? '')).rejects.toBeInstanceOf(
        SubmitterRefusedError,
      );
    }
    const rows = await db.select({ id: runs.id }).from(runs).where(eq(runs.repository, repository));
    expect(rows.map((row) => row.id)).toEqual([held.run.id]);
  });
});

describe('runs queued while runners claim, on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  test('every run queued during the claims is claimed exactly once, none lost', async () => {
    const owner = uniqueOwner();
    const repository = `${owner}/train`;
    const claimers = await Promise.all(
      Array.from({ length: 6 }, () => registerRunner(database.db, { owner, labels: ['cpu'] })),
    );
    const total = 120;
    const queued: string[] = [];
    const claimed: string[] = [];
    let submitting = true;
    const submitters = Array.from({ length: 4 }, async (_, s) => {
      for (let i = s; i < total; i += 4)
        queued.push((await submit(database.db, { repository, labels: ['cpu'] })).run.id);
    });
    const claiming = claimers.map(async (runner) => {
      for (;;) {
        const stillSubmitting = submitting;
        const run = await claim(database.db, runner);
        if (run) claimed.push(run.id);
        else if (!stillSubmitting) return;
      }
    });
    await Promise.all(submitters);
    submitting = false;
    await Promise.all(claiming);
    expect(queued).toHaveLength(total);
    expect([...claimed].sort()).toEqual([...queued].sort());
  });
});
