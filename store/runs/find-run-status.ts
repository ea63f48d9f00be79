import { eq } from 'drizzle-orm';
import type { RunStatus } from '../../schemas/statuses.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/** A run's state as it is now; null when there is no such run. */
export async function findRunStatus({
  db,
  runId,
}: {
  db: Database;
  runId: string;
}): Promise<RunStatus | null> {
  const [row] = await db.select({ status: runs.status }).from(runs).where(eq(runs.id, runId));
  return row?.status ?? null;
}
