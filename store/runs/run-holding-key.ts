import { eq } from 'drizzle-orm';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * The run that holds `run`'s trigger key, read after an insert skipped on that key: only a
 * conflict on the trigger key is skipped (a duplicate id raises), so the key is set.
 */
export async function runHoldingKey(db: Database, run: NewRun): Promise<Run> {
  const triggerKey = String(run.triggerKey);
  const [existing] = await db.select().from(runs).where(eq(runs.triggerKey, triggerKey));
  if (!existing)
    throw new Error(`The run holding trigger key "${triggerKey}" vanished while run ${run.id} was created`);
  return existing;
}
