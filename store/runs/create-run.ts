import type { SQL } from 'drizzle-orm';
import { runs, type NewRun, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { runHoldingKey } from './run-holding-key.js';

/**
 * Inserts a run unless one with the same trigger key exists, and returns the run that
 * holds the key either way: a redelivered webhook or a retried worker makes no second
 * run (DESIGN §8). `created` says whether this call made it. `computed` columns are SQL
 * expressions the insert itself evaluates (the reason a run waits for, the claim it is
 * leased to), so the run is stored with them in one statement.
 */
export async function createRun({
  db,
  run,
  computed = {},
}: {
  db: Database;
  run: NewRun;
  computed?: { [Column in keyof NewRun]?: SQL };
}): Promise<{ run: Run; created: boolean }> {
  const [inserted] = await db
    .insert(runs)
    .values({ ...run, ...computed })
    .onConflictDoNothing({ target: runs.triggerKey })
    .returning();
  if (inserted) return { run: inserted, created: true };
  return { run: await runHoldingKey(db, run), created: false };
}
