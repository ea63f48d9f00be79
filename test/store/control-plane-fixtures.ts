import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import { claimNextRun } from '../../store/claim-next-run.js';
import { createRun } from '../../store/create-run.js';
import { createRunner } from '../../store/create-runner.js';
import type { Database } from '../../store/database.js';
import { findRunnerByTokenHash } from '../../store/find-runner-by-token-hash.js';
import { startLeasedRun } from '../../store/start-leased-run.js';
import { makeRun } from './store-fixtures.js';

/** An owner no other test uses: a runner of it can only ever claim this test's runs. */
export function uniqueOwner(): string {
  return `org-${randomBytes(4).toString('hex')}`;
}

export function newLeaseId(): string {
  return randomBytes(32).toString('hex');
}

/** A registered runner that has just been seen (online), as the claim route hands it over. */
export async function registerRunner(
  db: Database,
  {
    owner,
    labels = [],
    repositories = [],
    name = `runner-${randomBytes(4).toString('hex')}`,
  }: { owner: string; labels?: string[]; repositories?: string[]; name?: string },
): Promise<RunnerRow> {
  const tokenHash = randomBytes(32).toString('hex');
  await createRunner({ db, name, owner, repositories, labels, tokenHash });
  const seen = await findRunnerByTokenHash({ db, tokenHash });
  if (!seen) throw new Error(`runner ${name} vanished`);
  return seen;
}

/** A run as the control plane queues it: not started, no stamp yet. */
export async function queueRun(
  db: Database,
  overrides: Partial<NewRun> & { repository: string },
): Promise<Run> {
  const { run } = await createRun({
    db,
    run: makeRun({
      status: 'queued',
      startedAt: null,
      codeDigest: null,
      envDigest: null,
      cloneUrl: `https://github.com/${overrides.repository}.git`,
      ...overrides,
    }),
  });
  return run;
}

/** Claims the next run for `runner` under a fresh lease. */
export async function claim(
  db: Database,
  runner: RunnerRow,
  { acceptForks = false, leaseTtlMs = 90_000 }: { acceptForks?: boolean; leaseTtlMs?: number } = {},
): Promise<Run | null> {
  return claimNextRun({ db, runner, acceptForks, leaseId: newLeaseId(), leaseTtlMs });
}

/** Queues a run of `repository`, has `runner` claim and start it; returns it with its lease. */
export async function startedRun(
  db: Database,
  runner: RunnerRow,
  overrides: Partial<NewRun> & { repository: string },
): Promise<Run & { leaseId: string }> {
  const queued = await queueRun(db, overrides);
  const claimed = await claim(db, runner);
  if (claimed?.id !== queued.id || claimed.leaseId === null) throw new Error('the run was not claimed');
  const started = await startLeasedRun({
    db,
    runId: queued.id,
    leaseId: claimed.leaseId,
    codeDigest: 'a'.repeat(64),
    envDigest: 'b'.repeat(64),
    params: claimed.params,
    paramsDigest: claimed.paramsDigest,
  });
  if (!started) throw new Error('the run did not start');
  return { ...started, leaseId: claimed.leaseId };
}

/** Moves a run's timestamp `ms` into the past, by the database's clock. */
export async function backdate(
  db: Database,
  runId: string,
  column: 'leaseExpiresAt' | 'queuedAt' | 'startedAt' | 'createdAt' | 'finishedAt',
  ms: number,
): Promise<void> {
  await db
    .update(runs)
    .set({ [column]: sql`now() - (${ms}::double precision * interval '1 millisecond')` })
    .where(eq(runs.id, runId));
}

export async function readRun(db: Database, runId: string): Promise<Run> {
  const [run] = await db.select().from(runs).where(eq(runs.id, runId));
  if (!run) throw new Error(`no run ${runId}`);
  return run;
}
