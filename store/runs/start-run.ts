import { and, eq, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Stamp } from '../../schemas/stamp.js';
import type { Database } from '../db/database.js';

/** The parts of a stamp that are computed where a run executes, when it starts (DESIGN §5). */
export type StartStamp = Pick<Stamp, 'codeDigest' | 'envDigest' | 'dirty'>;

/**
 * Moves a queued run to `running`, setting `started_at` by the database's clock and, when
 * given, the stamp computed at the start. Returns null when the run is not queued (it
 * was cancelled, or started already), so a caller never restarts a run by accident.
 */
export async function startRun({
  db,
  runId,
  stamp,
}: {
  db: Database;
  runId: string;
  stamp?: StartStamp;
}): Promise<Run | null> {
  const [run] = await db
    .update(runs)
    .set({ status: 'running', startedAt: sql`now()`, statusReason: null, ...stamp })
    .where(and(eq(runs.id, runId), eq(runs.status, 'queued')))
    .returning();
  return run ?? null;
}
