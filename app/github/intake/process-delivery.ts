import { beginDeliveryAttempt } from '../../../store/deliveries/begin-delivery-attempt.js';
import { markDeliveryProcessed } from '../../../store/deliveries/mark-delivery-processed.js';
import { recordDeliveryFailure } from '../../../store/deliveries/record-delivery-failure.js';
import { dispatchDelivery } from './dispatch-delivery.js';
import type { GitHubWork } from '../github-work.js';
import { UnreadablePayloadError } from './unreadable-payload-error.js';
import { messageOf } from '../../../core/text/message-of.js';

/** How processing one attempt at a delivery ended. */
export type DeliveryOutcome = 'processed' | 'skipped';

/**
 * Processes a stored delivery once (DESIGN §8): nothing when it was processed already
 * (a redelivery, a job added again by the reconciler, a retried job whose first attempt
 * finished). Every effect is idempotent — runs by their trigger keys, notices by their
 * ids, check runs and comments through the outbox — so a worker killed anywhere in here
 * is simply run again. A failure is logged with the delivery id, recorded as the
 * delivery's `last_error`, and thrown for a retry; with `lastAttempt`, or when the payload
 * cannot be read (no retry can help), the delivery is also marked given up on.
 */
export async function processDelivery(
  work: GitHubWork,
  { deliveryId, lastAttempt }: { deliveryId: string; lastAttempt: boolean },
): Promise<DeliveryOutcome> {
  const delivery = await beginDeliveryAttempt({ db: work.db, deliveryId });
  if (!delivery) return 'skipped';
  try {
    await dispatchDelivery(work, delivery);
  } catch (error) {
    const givingUp = lastAttempt || error instanceof UnreadablePayloadError;
    const message = messageOf(error);
    work.logger.error(
      {
        err: error,
        deliveryId,
        event: delivery.event,
        action: delivery.action,
        attempt: delivery.attempts,
        givingUp,
      },
      'delivery failed',
    );
    await recordDeliveryFailure({ db: work.db, deliveryId, error: message, givingUp });
    throw error;
  }
  await markDeliveryProcessed({ db: work.db, deliveryId });
  work.logger.debug({ deliveryId, event: delivery.event, action: delivery.action }, 'delivery processed');
  return 'processed';
}
