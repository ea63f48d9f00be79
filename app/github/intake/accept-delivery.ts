import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Database } from '../../../store/db/database.js';
import { storableJson } from '../../../core/text/storable-text.js';
import { recordDelivery } from '../../../store/deliveries/record-delivery.js';
import { enqueueDelivery, type DeliveryJob } from './delivery-queue.js';
import { dropFinishedJob } from './drop-finished-job.js';

/** A delivery whose signature Probot verified. */
export interface VerifiedDelivery {
  /** `X-GitHub-Delivery`. */
  id: string;
  /** `X-GitHub-Event`. */
  name: string;
  payload: Record<string, unknown>;
}

/**
 * GitHub's delivery ids are GUIDs. Anything else is refused before it reaches BullMQ,
 * whose job ids may be neither integers nor contain `:`.
 */
const DELIVERY_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,99}$/;

/**
 * The intake of DESIGN §8, all a webhook request does: stores the delivery (its id and
 * its payload unique: a copy of one already stored — the same id, or the same signed body
 * under another id, which is how a captured delivery is replayed — changes nothing, unless
 * it was given up on; then the copy, GitHub's Redeliver, reopens it) and enqueues the
 * stored delivery's processing. Nothing here waits on GitHub, so the answer goes back
 * within GitHub's 10 s.
 */
export async function acceptDelivery({
  db,
  queue,
  logger,
  delivery,
}: {
  db: Database;
  queue: Queue<DeliveryJob>;
  logger: Logger;
  delivery: VerifiedDelivery;
}): Promise<void> {
  if (!DELIVERY_ID.test(delivery.id) || /^\d+$/.test(delivery.id)) {
    // `status` is what the webhook middleware answers with: 400, not 500.
    throw Object.assign(
      new Error(`X-GitHub-Delivery: "${delivery.id.slice(0, 100)}" is not a delivery id (a GUID)`),
      { status: 400 },
    );
  }
  // Stored as data, whatever text it holds: a NUL in a title must not make it unstorable.
  const payload = storableJson(delivery.payload) as Record<string, unknown>;
  const installation = payload.installation as { id?: unknown } | undefined;
  const recorded = await recordDelivery({
    db,
    delivery: {
      id: delivery.id,
      event: delivery.name,
      action: typeof payload.action === 'string' ? payload.action : null,
      installationId: typeof installation?.id === 'number' ? installation.id : null,
      payload,
    },
  });
  const { outcome, deliveryId } = recorded;
  logger.info(
    {
      deliveryId: delivery.id,
      event: delivery.name,
      action: payload.action,
      stored: outcome === 'stored',
      ...(deliveryId !== delivery.id && { copyOf: deliveryId }),
    },
    'webhook received',
  );
  if (deliveryId !== delivery.id) {
    // GitHub signs the body, not the delivery id: the same body under another id is a
    // replay (or a copy), and the event it carries was stored, and is handled, once.
    logger.warn(
      { deliveryId: delivery.id, copyOf: deliveryId, event: delivery.name },
      'a delivery stored already came again under another id: it is that delivery, never processed twice',
    );
  }
  if (outcome === 'reopened') {
    // GitHub's Redeliver of a delivery given up on: its finished job would swallow the add.
    logger.warn(
      { deliveryId, event: delivery.name },
      'delivery given up on was redelivered; processing it again',
    );
    await dropFinishedJob(queue, deliveryId, logger);
  }
  await enqueueDelivery(queue, deliveryId, logger);
}
