import { and, eq, isNull, sql } from 'drizzle-orm';
import { deliveries, type DeliveryRow } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/**
 * Counts one more attempt at processing a delivery and returns it, or null when there is
 * nothing to do: the delivery is unknown, was processed already (a redelivery, a job
 * added again by the reconciler) or was given up on.
 */
export async function beginDeliveryAttempt({
  db,
  deliveryId,
}: {
  db: Database;
  deliveryId: string;
}): Promise<DeliveryRow | null> {
  const [delivery] = await db
    .update(deliveries)
    .set({ attempts: sql`${deliveries.attempts} + 1` })
    .where(and(eq(deliveries.id, deliveryId), isNull(deliveries.processedAt), isNull(deliveries.failedAt)))
    .returning();
  return delivery ?? null;
}
