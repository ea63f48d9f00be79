import { asc, eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/** The runs of one sweep, in the order of its grid. */
export async function listGroupRuns({ db, groupId }: { db: Database; groupId: string }): Promise<Run[]> {
  return db.select().from(runs).where(eq(runs.groupId, groupId)).orderBy(asc(runs.groupIndex), asc(runs.id));
}
