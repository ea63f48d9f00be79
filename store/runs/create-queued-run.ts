import { and, eq, getTableColumns, not, sql, type Column, type SQL } from 'drizzle-orm';
import { apiTokens } from '../../schemas/tables/api-tokens.js';
import { runners } from '../../schemas/tables/runners.js';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';
import { perHandle } from '../db/per-handle.js';
import { runnerMayTake } from '../leases/runner-may-take.js';
import { waitingReason } from '../leases/waiting-reason.js';
import { runHoldingKey } from './run-holding-key.js';
import { SubmitterRefusedError } from './submitter-refused-error.js';

/** The API token queueing the run, checked by the INSERT itself. */
export interface QueuedRunSubmitter {
  /** The token's sha256 hex. */
  tokenHash: string;
}

/** A claim parked for work, which the run may be leased to as it is inserted. */
export interface QueuedRunTaker {
  runnerId: string;
  runnerName: string;
  acceptForks: boolean;
  leaseId: string;
  leaseTtlMs: number;
}

/**
 * Queues a run (a trigger key already held returns the run that holds it, as createRun
 * does) with the reason it waits for — `Queued`, or `Waiting for a runner labelled gpu`
 * when no runner seen within `onlineWindowMs` may take it — computed by the same INSERT:
 * one statement and one commit, so the submitter's first answer says whether any runner
 * can take the run without a second write (recordWaitingReasons' rule, waiting-reason.ts).
 *
 * With a `taker` (a claim parked for work), the same INSERT stores the run already leased
 * to it, as claimNextRun would have, when the claim's rule lets its runner — as its row now
 * reads — take the run and no older queued run is one it may take (FIFO holds); else the
 * run is queued as without one. The run returned says which (`status`, `leaseId`).
 *
 * With a `submitter`, the same INSERT reads the API token's row: the run is written only if
 * the token is live, may submit, and reaches the run's repository at that instant, and
 * its `submittedBy` is the token's name; else nothing is written and SubmitterRefusedError
 * is thrown. A submit need not read the token first (one round trip less) and a token
 * revoked an instant before cannot slip a run in.
 *
 * The statement is built once per handle and shape (which columns are given, with a taker
 * or not) and then only executed: drizzle takes longer to build this INSERT than
 * PostgreSQL takes to run a prepared one.
 */
export async function createQueuedRun({
  db,
  run,
  onlineWindowMs,
  taker,
  submitter,
}: {
  db: Database;
  onlineWindowMs: number;
  taker?: QueuedRunTaker;
} & (
  | { run: NewRun & { status: 'queued' }; submitter?: undefined }
  // The token's row decides these two: a value given for them would be overridden.
  | {
      run: NewRun & { status: 'queued'; trustDomain?: never; submittedBy?: never };
      submitter: QueuedRunSubmitter;
    }
)): Promise<{ run: Run; created: boolean }> {
  // An undefined value is the column's default, which a placeholder would make null.
  const given = Object.entries(run).filter(([, value]) => value !== undefined);
  const columns = given.map(([column]) => column).sort();
  // As drizzle would send them; null as it is (a column's encoder takes values only).
  const values: Record<string, unknown> = Object.fromEntries(
    given.map(([column, value]) => [
      `column_${column}`,
      value === null ? null : (RUN_COLUMNS[column] as Column).mapToDriverValue(value),
    ]),
  );
  values.scopeLabels = runs.labels.mapToDriverValue([...(run.labels ?? [])]);
  values.scopeFork = run.fork ?? false;
  values.onlineWindowMs = onlineWindowMs;
  if (taker) {
    values.takerRunnerId = taker.runnerId;
    values.takerRunnerName = taker.runnerName;
    values.takerAcceptForks = taker.acceptForks;
    values.takerLeaseId = taker.leaseId;
    values.takerLeaseTtlMs = taker.leaseTtlMs;
  }
  if (submitter) values.submitterTokenHash = submitter.tokenHash;
  const statement = insertStatement(db, columns, {
    taker: taker !== undefined,
    submitter: submitter !== undefined,
  });
  let inserted: Run | undefined;
  try {
    [inserted] = await statement.execute(values);
  } catch (error) {
    if (submitter && refusedByToken(error)) throw new SubmitterRefusedError();
    throw error;
  }
  if (inserted) return { run: inserted, created: true };
  return { run: await runHoldingKey(db, run), created: false };
}

const RUN_COLUMNS: Record<string, Column | undefined> = getTableColumns(runs);

interface InsertStatement {
  execute(values: Record<string, unknown>): Promise<Run[]>;
}

/** Shapes kept per handle: callers pass a few fixed sets of columns, so this is a guard. */
const MOST_SHAPES = 32;
const shapesOf = perHandle(() => new Map<string, InsertStatement>());

/** Which of the INSERT's optional parts it has. */
interface InsertParts {
  taker: boolean;
  submitter: boolean;
}

function insertStatement(db: Database, columns: readonly string[], parts: InsertParts): InsertStatement {
  const shapes = shapesOf(db);
  const shape = `${parts.taker ? 'taker' : 'queued'}:${parts.submitter ? 'submitter' : 'given'}:${columns.join(',')}`;
  const known = shapes.get(shape);
  if (known) return known;
  const statement = buildInsert(db, columns, parts);
  if (shapes.size < MOST_SHAPES) shapes.set(shape, statement);
  return statement;
}

function buildInsert(db: Database, columns: readonly string[], parts: InsertParts): InsertStatement {
  const given = (column: string): SQL => sql`${sql.placeholder(`column_${column}`)}`;
  const scope = {
    labels: sql`${sql.placeholder('scopeLabels')}::text[]`,
    repository: sql`${given('repository')}::text`,
    fork: sql`${sql.placeholder('scopeFork')}::boolean`,
  };
  const reason = waitingReason(sql.placeholder('onlineWindowMs'), scope, sql`null::text`);
  const row: Record<string, unknown> = Object.fromEntries(columns.map((column) => [column, given(column)]));
  if (parts.submitter) {
    // The token as this statement reads it; none (null) leaves trust_domain null, which its
    // NOT NULL refuses before anything is written, and before a held trigger key is
    // looked at: a refused token does not learn the run a retry would have answered.
    const token = sql`${apiTokens}
      where ${apiTokens.tokenHash} = ${sql.placeholder('submitterTokenHash')}
        and ${apiTokens.revokedAt} is null
        and ${apiTokens.scope} = 'submit'
        and ${scope.repository} = any(${apiTokens.repositories})`;
    row.trustDomain = sql`(select 'trusted' from ${token})`;
    row.submittedBy = sql`(select ${apiTokens.name} from ${token})`;
  }
  if (!parts.taker) {
    row.statusReason = reason;
  } else {
    const acceptForks = sql`${sql.placeholder('takerAcceptForks')}::boolean`;
    // Once per statement, in a CTE: written into each CASE, the test would be planned and
    // run once per column it decides (six InitPlans, each a runners lookup and a scan of
    // the queued runs).
    const taker = db.$with('taker').as(
      db
        .select({
          taken: sql<boolean>`(${runnerMayTake(runners, acceptForks, scope)}
            and not exists (select from ${runs}
              where ${and(eq(runs.status, 'queued'), not(runs.cancelRequested), runnerMayTake(runners, acceptForks))}))`.as(
            'taken',
          ),
        })
        .from(runners)
        .where(eq(runners.id, sql.placeholder('takerRunnerId'))),
    );
    const taken = sql`coalesce((select ${taker.taken} from ${taker}), false)`;
    const ifTaken = (value: SQL, otherwise: SQL = sql`null`): SQL =>
      sql`(case when ${taken} then ${value} else ${otherwise} end)`;
    Object.assign(row, {
      status: ifTaken(sql`'running'`, sql`'queued'`),
      leaseId: ifTaken(sql`${sql.placeholder('takerLeaseId')}::text`),
      leaseExpiresAt: ifTaken(sql`now() + ${milliseconds(sql.placeholder('takerLeaseTtlMs'))}`),
      claimedAt: ifTaken(sql`now()`),
      runnerName: ifTaken(sql`${sql.placeholder('takerRunnerName')}::text`),
      statusReason: ifTaken(sql`null`, reason),
    });
    return db
      .with(taker)
      .insert(runs)
      .values(row as NewRun)
      .onConflictDoNothing({ target: runs.triggerKey })
      .returning()
      .prepare('create_queued_run_taker');
  }
  return db
    .insert(runs)
    .values(row as NewRun)
    .onConflictDoNothing({ target: runs.triggerKey })
    .returning()
    .prepare('create_queued_run');
}

/** Whether the INSERT failed on the NOT NULL of trust_domain: the submitter's token was refused. */
function refusedByToken(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const failure = cause as Error & { code?: string; column_name?: string; column?: string };
    if (failure.code === '23502' && (failure.column_name ?? failure.column) === 'trust_domain') return true;
  }
  return false;
}
