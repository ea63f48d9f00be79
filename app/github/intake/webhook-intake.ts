import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { ApplicationFunction } from 'probot';
import type { Database } from '../../../store/db/database.js';
import { loggableError } from '../../http/loggable-error.js';
import { acceptDelivery } from './accept-delivery.js';
import type { DeliveryJob } from './delivery-queue.js';
import { SUBSCRIBED_EVENTS } from './dispatch-delivery.js';

/**
 * The Probot app of `fluksio app`: every delivery of a subscribed event, once Probot has
 * verified its signature, is stored and enqueued (acceptDelivery) — the handler does
 * nothing else, so the answer never waits on GitHub. A BullMQ worker does the rest. A
 * failure to store is answered 500 with a sentence naming the delivery, never the cause.
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
      try {
        await acceptDelivery({
          db,
          queue,
          logger,
          delivery: { id, name, payload: payload as Record<string, unknown> },
        });
      } catch (error) {
        // The middleware answers with the error's status and message: a refusal's sentence
        // is for the sender, anything else (an SQL error naming the payload) only for the log.
        if (typeof (error as { status?: unknown }).status === 'number') throw error;
        logger.error({ deliveryId: id, event: name, ...loggableError(error) }, 'could not store a delivery');
        throw Object.assign(
          new Error(`The delivery could not be stored; the control plane's log says why (delivery ${id})`),
          { status: 500 },
        );
      }
    });
  };
}
