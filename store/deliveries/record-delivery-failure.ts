import { eq, sql } from 'drizzle-orm';
import { deliveries } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/**
 * Records why processing a delivery failed, where an operator sees it (`last_error`);
 * with `givingUp`, also that no one will try again (`failed_at`), so the reconciler leaves
 * it alone.
 */
export async function recordDeliveryFailure({
  db,
  deliveryId,
  error,
  givingUp,
}: {
  db: Database;
  deliveryId: string;
  error: string;
  givingUp: boolean;
}): Promise<void> {
  await db
    .update(deliveries)
    .set({ lastError: error.slice(0, 4000), ...(givingUp ? { failedAt: sql`now()` } : {}) })
    .where(eq(deliveries.id, deliveryId));
}
