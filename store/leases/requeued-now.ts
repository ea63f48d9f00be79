import { sql, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { runs } from '../../schemas/tables/runs.js';

/**
 * The columns of a running run put back in the queue now, with `reason` as its status
 * reason: the lease is cleared, so any write of the runner that held it is stale, and the
 * queue timeout counts again from now. The attempt goes up only when the run had started:
 * events are applied once per `(run, attempt, seq)`, so a new execution needs a new
 * attempt; a run claimed but never started applied none, and keeps its number.
 */
export function requeuedNow(reason: string | SQL) {
  return {
    status: 'queued',
    statusReason: reason,
    attempt: sql`${runs.attempt} + (case when ${runs.startedAt} is null then 0 else 1 end)`,
    leaseId: null,
    leaseExpiresAt: null,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    queuedAt: sql`now()`,
  } satisfies PgUpdateSetSource<typeof runs>;
}
