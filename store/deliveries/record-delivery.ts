import { isNotNull, sql } from 'drizzle-orm';
import { deliveries, type NewDeliveryRow } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/**
 * What storing a delivery did: `stored` it for the first time; `reopened` one with its id
 * that was given up on, to be processed again; or nothing, the delivery being `known`
 * (waiting, in progress or processed).
 */
export type RecordedDelivery = 'stored' | 'reopened' | 'known';

/**
 * Stores a webhook delivery as it arrived, unless one with the same id is stored already
 * (GitHub's redelivery, or the same delivery sent twice at once), in which case the first
 * copy is the one kept. A copy of a delivery that was given up on reopens it — no longer
 * failed, its attempts counted from zero, its error cleared — as someone pressing
 * Redeliver on GitHub asks for; any other copy changes nothing, so a processed delivery is
 * never processed twice.
 */
export async function recordDelivery({
  db,
  delivery,
}: {
  db: Database;
  delivery: Pick<NewDeliveryRow, 'id' | 'event' | 'action' | 'installationId' | 'payload'>;
}): Promise<RecordedDelivery> {
  const [row] = await db
    .insert(deliveries)
    .values(delivery)
    .onConflictDoUpdate({
      target: deliveries.id,
      set: { failedAt: null, attempts: 0, lastError: null },
      where: isNotNull(deliveries.failedAt),
    })
    .returning({ inserted: sql<boolean>`xmax = 0` });
  if (!row) return 'known';
  return row.inserted ? 'stored' : 'reopened';
}
