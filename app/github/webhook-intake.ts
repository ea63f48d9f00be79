import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { ApplicationFunction } from 'probot';
import type { Database } from '../../store/database.js';
import { acceptDelivery } from './accept-delivery.js';
import type { DeliveryJob } from './delivery-queue.js';
import { SUBSCRIBED_EVENTS } from './dispatch-delivery.js';

/**
 * The Probot app of `fluksio app`: every delivery of a subscribed event, once Probot has
 * verified its signature, is stored and enqueued (acceptDelivery) — the handler does
 * nothing else, so the answer never waits on GitHub. A BullMQ worker does the rest.
 */
export function webhookIntake({
  db,
  queue,
  logger,
}: {
  db: Database;
  queue: Queue<DeliveryJob>;
  logger: Logger;
}): ApplicationFunction {
  return (app) => {
    app.onAny(async ({ id, name, payload }) => {
      if (!SUBSCRIBED_EVENTS.has(name)) return;
      await acceptDelivery({
        db,
        queue,
        logger,
        delivery: { id, name, payload: payload as Record<string, unknown> },
      });
    });
  };
}
