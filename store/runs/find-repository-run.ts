import { and, eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * The run with exactly this id in this repository, or null: a check run's `external_id`
 * names a run, and a check run of one repository never reaches another's run.
 */
export async function findRepositoryRun({
  db,
  repository,
  runId,
}: {
  db: Database;
  repository: string;
  runId: string;
}): Promise<Run | null> {
  const [run] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.id, runId), eq(runs.repository, repository)));
  return run ?? null;
}
