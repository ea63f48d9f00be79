import { and, eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/** The running run leased under `leaseId`, or null: whether a write that may have failed leased one. */
export async function findLeasedRun({ db, leaseId }: { db: Database; leaseId: string }): Promise<Run | null> {
  const [run] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.status, 'running'), eq(runs.leaseId, leaseId)));
  return run ?? null;
}
