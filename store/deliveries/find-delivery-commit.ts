import { asc, like } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { escapeLike } from '../db/escape-like.js';

/**
 * The commit the runs a delivery already made are pinned to, or null when it made none:
 * a delivery processed again (its worker died midway) queues the rest of its runs at
 * the same commit, whatever the pull request's head is by then.
 */
export async function findDeliveryCommit({
  db,
  deliveryId,
}: {
  db: Database;
  deliveryId: string;
}): Promise<string | null> {
  const pattern = `delivery:${escapeLike(deliveryId)}:%`;
  const [run] = await db
    .select({ commit: runs.commit })
    .from(runs)
    .where(like(runs.triggerKey, pattern))
    .orderBy(asc(runs.triggerKey))
    .limit(1);
  return run?.commit ?? null;
}
