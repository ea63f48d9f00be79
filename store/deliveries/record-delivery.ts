import { deliveries, type NewDeliveryRow } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/**
 * Stores a webhook delivery as it arrived, unless one with the same id is stored already
 * (GitHub's redelivery, or the same delivery sent twice at once): `ON CONFLICT DO
 * NOTHING`, so the first copy is the one kept. Returns whether this call stored it.
 */
export async function recordDelivery({
  db,
  delivery,
}: {
  db: Database;
  delivery: Pick<NewDeliveryRow, 'id' | 'event' | 'action' | 'installationId' | 'payload'>;
}): Promise<boolean> {
  const inserted = await db
    .insert(deliveries)
    .values(delivery)
    .onConflictDoNothing({ target: deliveries.id })
    .returning({ id: deliveries.id });
  return inserted.length > 0;
}
