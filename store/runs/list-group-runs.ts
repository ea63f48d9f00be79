import { and, asc, eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * The runs of one sweep of `repository`, in the order of its grid. A group id is the
 * submitter's word, so runs another repository's token filed under the same id are never
 * among them.
 */
export async function listGroupRuns({
  db,
  groupId,
  repository,
}: {
  db: Database;
  groupId: string;
  repository: string;
}): Promise<Run[]> {
  return db
    .select()
    .from(runs)
    .where(and(eq(runs.groupId, groupId), eq(runs.repository, repository)))
    .orderBy(asc(runs.groupIndex), asc(runs.id));
}
