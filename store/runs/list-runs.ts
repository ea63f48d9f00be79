import { and, desc, eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * The newest `limit` runs (every one without a limit), optionally of one repository and
 * one pipeline file: `fluksio runs`.
 */
export async function listRuns({
  db,
  repository,
  pipelinePath,
  limit,
}: {
  db: Database;
  repository?: string;
  pipelinePath?: string;
  limit?: number;
}): Promise<Run[]> {
  const query = db
    .select()
    .from(runs)
    .where(
      and(
        repository === undefined ? undefined : eq(runs.repository, repository),
        pipelinePath === undefined ? undefined : eq(runs.pipelinePath, pipelinePath),
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id));
  return limit === undefined ? query : query.limit(limit);
}
