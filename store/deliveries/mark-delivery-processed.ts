import { eq, sql } from 'drizzle-orm';
import { deliveries } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/** Records that a delivery was processed to the end; an earlier attempt's error is cleared. */
export async function markDeliveryProcessed({
  db,
  deliveryId,
}: {
  db: Database;
  deliveryId: string;
}): Promise<void> {
  await db
    .update(deliveries)
    .set({ processedAt: sql`now()`, lastError: null })
    .where(eq(deliveries.id, deliveryId));
}
