import { and, eq, isNull, sql } from 'drizzle-orm';
import { deliveries, type DeliveryRow } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';

/** What beginning an attempt at a delivery came to. */
export type BegunDelivery =
  /** Counted; process it. */
  | { state: 'begun'; delivery: DeliveryRow }
  /** `maxAttempts` were begun already and none finished: given up on now, `last_error` saying why. */
  | { state: 'given-up'; delivery: DeliveryRow };

/**
 * Counts one more attempt at processing a delivery and returns it, or null when there is
 * nothing to do: the delivery is unknown, was processed already (a redelivery, a job
 * added again by the reconciler) or was given up on. A delivery begun `maxAttempts` times
 * already without finishing (each attempt's worker died or hung, so none could record a
 * failure) is given up on instead, in the same statement: `failed_at` set and `last_error`
 * saying so, after the last error recorded if there is one.
 */
export async function beginDeliveryAttempt({
  db,
  deliveryId,
  maxAttempts,
}: {
  db: Database;
  deliveryId: string;
  maxAttempts: number;
}): Promise<BegunDelivery | null> {
  const exhausted = sql`${deliveries.attempts} >= ${maxAttempts}`;
  const reason = `Given up: processing was begun ${maxAttempts} times and never finished (its worker died or hung)`;
  const [delivery] = await db
    .update(deliveries)
    .set({
      attempts: sql`case when ${exhausted} then ${deliveries.attempts} else ${deliveries.attempts} + 1 end`,
      failedAt: sql`case when ${exhausted} then now() end`,
      lastError: sql`case when ${exhausted} then left(${reason} || coalesce('; the last error: ' || ${deliveries.lastError}, ''), 4000) else ${deliveries.lastError} end`,
    })
    .where(and(eq(deliveries.id, deliveryId), isNull(deliveries.processedAt), isNull(deliveries.failedAt)))
    .returning();
  if (!delivery) return null;
  return { state: delivery.failedAt === null ? 'begun' : 'given-up', delivery };
}
