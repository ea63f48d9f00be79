import { eq, sql } from 'drizzle-orm';
import { runs, type Run } from '../schemas/tables/runs.js';
import type { RunStatus } from '../schemas/statuses.js';
import type { Database } from './database.js';

/**
 * Records a run's final state: its status and the sentence saying why, its final metrics,
 * `finished_at` (the database's clock unless `finishedAt` is given) and `duration_ms`
 * since `started_at` (null for a run that never started). Returns null for an unknown run.
 */
export async function finishRun({
  db,
  runId,
  status,
  reason,
  metrics,
  dirtyReasons = [],
  finishedAt,
  baselineRunId,
}: {
  db: Database;
  runId: string;
  status: RunStatus;
  reason: string | null;
  metrics: Record<string, number>;
  /** What changed in the code while stages ran: makes the run dirty (its start stamp said otherwise). */
  dirtyReasons?: string[];
  finishedAt?: Date;
  /** The baseline fixed at the end (null: none); undefined leaves it unfixed. */
  baselineRunId?: string | null;
}): Promise<Run | null> {
  const finished = finishedAt ? sql`${finishedAt.toISOString()}::timestamptz` : sql`now()`;
  const [run] = await db
    .update(runs)
    .set({
      status,
      statusReason: reason,
      metrics,
      ...(dirtyReasons.length > 0 ? { dirty: true, dirtyReasons } : {}),
      ...(baselineRunId === undefined ? {} : { baselineRunId, baselineFixed: true }),
      finishedAt: finished,
      durationMs: sql`extract(epoch from (${finished} - ${runs.startedAt})) * 1000`,
    })
    .where(eq(runs.id, runId))
    .returning();
  return run ?? null;
}
