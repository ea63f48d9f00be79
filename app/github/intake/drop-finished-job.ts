import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { DeliveryJob } from './delivery-queue.js';

/**
 * Removes the finished job — failed or completed — of a delivery the database says is
 * still to process, so the delivery can be added again under the same job id: one whose
 * last attempt could record nothing (the database was down), stalled past BullMQ's limit
 * (its worker killed twice), or was given up on and then reopened by a redelivery. Kept, its
 * id would swallow every add, and the delivery would never be processed. A job in any other
 * state is left alone: waiting, active or retrying, it processes the delivery itself.
 * Never rejects: a failure is logged, and the reconciler tries again.
 */
export async function dropFinishedJob(
  queue: Queue<DeliveryJob>,
  deliveryId: string,
  logger: Logger,
): Promise<void> {
  try {
    const job = await queue.getJob(deliveryId);
    if (job && ((await job.isFailed()) || (await job.isCompleted()))) await job.remove();
  } catch (error) {
    logger.warn({ err: error, deliveryId }, 'could not drop the finished job of an unprocessed delivery');
  }
}
