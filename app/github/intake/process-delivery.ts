import { beginDeliveryAttempt } from '../../../store/deliveries/begin-delivery-attempt.js';
import { markDeliveryProcessed } from '../../../store/deliveries/mark-delivery-processed.js';
import { recordDeliveryFailure } from '../../../store/deliveries/record-delivery-failure.js';
import { dispatchDelivery } from './dispatch-delivery.js';
import type { GitHubWork } from '../github-work.js';
import { UnreadablePayloadError } from './unreadable-payload-error.js';
import { messageOf } from '../../../core/text/message-of.js';

/**
 * Attempts begun at one delivery before it is given up on, counted in its row: whether
 * each failed, or its worker died or hung before it could say, a poison delivery is tried
 * this many times in all — across BullMQ's retries and the reconciler's adds — and no more.
 */
export const DELIVERY_MAX_ATTEMPTS = 16;

/** How processing one attempt at a delivery ended. */
export type DeliveryOutcome = 'processed' | 'skipped' | 'given-up';

/**
 * Processes a stored delivery once (DESIGN §8): nothing when it was processed already
 * (a redelivery, a job added again by the reconciler, a retried job whose first attempt
 * finished) or given up on. Every effect is idempotent — runs by their trigger keys,
 * notices by their ids, check runs and comments through the outbox, replies by their
 * marker — so a worker killed anywhere in here is simply run again. A failure is logged
 * with the delivery id, recorded as the delivery's `last_error`, and thrown for a retry;
 * on the DELIVERY_MAX_ATTEMPTS-th attempt, or when the payload cannot be read (no retry can
 * help), the delivery is also marked given up on. One begun that many times already, none
 * finishing, is given up on without being processed.
 */
export async function processDelivery(
  work: GitHubWork,
  { deliveryId }: { deliveryId: string },
): Promise<DeliveryOutcome> {
  const begun = await beginDeliveryAttempt({ db: work.db, deliveryId, maxAttempts: DELIVERY_MAX_ATTEMPTS });
  if (!begun) return 'skipped';
  const { delivery } = begun;
  if (begun.state === 'given-up') {
    work.logger.error(
      {
        deliveryId,
        event: delivery.event,
        action: delivery.action,
        attempts: delivery.attempts,
        reason: delivery.lastError,
      },
      'delivery given up',
    );
    return 'given-up';
  }
  try {
    await dispatchDelivery(work, delivery);
  } catch (error) {
    const givingUp = delivery.attempts >= DELIVERY_MAX_ATTEMPTS || error instanceof UnreadablePayloadError;
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
