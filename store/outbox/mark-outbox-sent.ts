import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import { outboxTable, type OutboxTarget } from './outbox-target.js';

/**
 * Records that GitHub now shows a target's `renderedVersion` (the render version read
 * before rendering), compare-and-set: the sent version only ever goes up, so a slower,
 * older sync never overwrites a newer one's record. Returns the row's render version as
 * it is now — above `renderedVersion` when the target changed during the sync and must
 * be sent again — or null when the row is gone.
 */
export async function markOutboxSent({
  db,
  target,
  renderedVersion,
}: {
  db: Database;
  target: OutboxTarget;
  renderedVersion: number;
}): Promise<number | null> {
  const { table, key, renderVersion, sentVersion } = outboxTable(target.kind);
  const [marked] = await db
    .update(table)
    .set({ sentVersion: sql`${renderedVersion}` })
    .where(and(eq(key, target.id), lt(sentVersion, renderedVersion)))
    .returning({ renderVersion });
  if (marked) return marked.renderVersion;
  const [row] = await db.select({ renderVersion }).from(table).where(eq(key, target.id));
  return row?.renderVersion ?? null;
}
