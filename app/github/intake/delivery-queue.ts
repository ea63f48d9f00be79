import { Queue, type JobsOptions } from 'bullmq';
import type { Logger } from 'pino';

/** The BullMQ queue of webhook deliveries to process, under the control plane's prefix. */
export const DELIVERY_QUEUE = 'github-deliveries';

/** A delivery job's data: only the id; the payload is read from the database. */
export interface DeliveryJob {
  deliveryId: string;
}

/**
 * Retries of a failed delivery: GitHub or the database failing for a few minutes delays
 * it, no more. After the last the job fails, and the reconciler adds the delivery again
 * for as long as it is not given up on (DELIVERY_MAX_ATTEMPTS begun attempts in all,
 * process-delivery.ts), its `last_error` kept.
 */
export const DELIVERY_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 5_000 },
};

/** How long accepting a webhook waits for Redis before leaving the delivery to the reconciler. */
const ENQUEUE_TIMEOUT_MS = 2_000;

/** The queue of deliveries, for adding jobs (the worker has its own connection). */
export function openDeliveryQueue({
  redisUrl,
  prefix,
  logger,
}: {
  redisUrl: string;
  prefix: string;
  logger: Logger;
}): Queue<DeliveryJob> {
  const queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, {
    connection: { url: redisUrl, maxRetriesPerRequest: null },
    prefix,
  });
  queue.on('error', (error) => logger.warn({ err: error }, 'delivery queue: Redis error'));
  return queue;
}

/**
 * Adds the job that processes a stored delivery, its job id the delivery id, so a
 * delivery already waiting, running or retrying is not added twice. Waits at most two
 * seconds: GitHub wants an answer within ten, and a delivery whose job could not be added
 * is stored, so the reconciler adds it later. Never rejects; says whether it was added.
 */
export async function enqueueDelivery(
  queue: Queue<DeliveryJob>,
  deliveryId: string,
  logger: Logger,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Redis did not answer within ${ENQUEUE_TIMEOUT_MS} ms`)),
      ENQUEUE_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([
      queue.add('delivery', { deliveryId }, { ...DELIVERY_JOB_OPTIONS, jobId: deliveryId }),
      timeout,
    ]);
    return true;
  } catch (error) {
    logger.warn(
      { err: error, deliveryId },
      'delivery stored but not enqueued; the reconciler will enqueue it',
    );
    return false;
  } finally {
    clearTimeout(timer);
  }
}
