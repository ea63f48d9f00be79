import { eq } from 'drizzle-orm';
import { runners } from '../../schemas/tables/runners.js';
import type { Database } from '../db/database.js';

/**
 * Removes a runner (`fluksio runner remove`): its token stops authenticating at once, and
 * a run it still holds is taken back by the sweeper when the lease expires. Runs keep its
 * name as history. False when no runner has that name.
 */
export async function removeRunner({ db, name }: { db: Database; name: string }): Promise<boolean> {
  const removed = await db.delete(runners).where(eq(runners.name, name)).returning({ id: runners.id });
  return removed.length > 0;
}
