import { eq } from 'drizzle-orm';
import { runs, type Run } from '../schemas/tables/runs.js';
import type { Database } from './database.js';

/** The run fixed as `run`'s baseline when it finished; null for none, or not fixed yet. */
export async function getBaselineRun({ db, run }: { db: Database; run: Run }): Promise<Run | null> {
  if (!run.baselineFixed || run.baselineRunId === null) return null;
  const [baseline] = await db.select().from(runs).where(eq(runs.id, run.baselineRunId));
  return baseline ?? null;
}
