import { and, asc, isNull, lt, sql } from 'drizzle-orm';
import { deliveries } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';

/**
 * The ids of stored deliveries that were neither processed nor given up on and arrived
 * more than `olderThanMs` ago, oldest first, at most `limit`: what the reconciler enqueues
 * again, in case their job was lost (DESIGN §8).
 */
export async function listUnprocessedDeliveries({
  db,
  olderThanMs,
  limit,
}: {
  db: Database;
  olderThanMs: number;
  limit: number;
}): Promise<string[]> {
  const rows = await db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(
      and(
        isNull(deliveries.processedAt),
        isNull(deliveries.failedAt),
        lt(deliveries.receivedAt, sql`now() - ${milliseconds(olderThanMs)}`),
      ),
    )
    .orderBy(asc(deliveries.receivedAt))
    .limit(limit);
  return rows.map((row) => row.id);
}
