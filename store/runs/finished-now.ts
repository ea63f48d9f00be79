import { sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import { runs } from '../../schemas/tables/runs.js';

/**
 * The columns a run gets when it reaches a final state now, by the database's clock:
 * `finished_at`, and `duration_ms` since `started_at` (null for a run that never started).
 * The lease's expiry goes, so the sweeper never looks at the run again.
 */
export function finishedNow() {
  return {
    finishedAt: sql`now()`,
    durationMs: sql`extract(epoch from (now() - ${runs.startedAt})) * 1000`,
    leaseExpiresAt: null,
  } satisfies PgUpdateSetSource<typeof runs>;
}
