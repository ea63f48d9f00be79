import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import { listUnprocessedDeliveries } from '../../../store/deliveries/list-unprocessed-deliveries.js';
import { keepJobScheduled } from '../../keep-job-scheduled.js';
import { dropFinishedJob } from './drop-finished-job.js';
import { DELIVERY_QUEUE, enqueueDelivery, type DeliveryJob } from './delivery-queue.js';
import type { GitHubWork } from '../github-work.js';
import { processDelivery } from './process-delivery.js';
import { UnreadablePayloadError } from './unreadable-payload-error.js';

const RECONCILE_JOB = 'reconcile-deliveries';
/** Deliveries younger than this are left to the job their intake added. */
const RECONCILE_AFTER_MS = 10_000;
/** Deliveries enqueued again per reconcile, oldest first. */
const RECONCILE_BATCH = 500;

export interface DeliveryWorkerOptions {
  work: GitHubWork;
  queue: Queue<DeliveryJob>;
  redisUrl: string;
  prefix: string;
  /** How often the reconciler looks for stored deliveries never processed. */
  reconcileEveryMs: number;
  /**
   * Deliveries processed at once by this replica.
   * @defaultValue 8
   */
  concurrency?: number;
  logger: Logger;
}

export interface DeliveryWorker {
  /** Stops the reconciler's schedule and closes the worker, waiting for deliveries in progress. */
  close(): Promise<void>;
}

/**
 * Starts processing webhook deliveries (DESIGN §8): a BullMQ worker runs processDelivery
 * for each job, retried with backoff; a payload that cannot be read fails at once. A
 * repeatable job, the reconciler, enqueues stored deliveries that were neither processed
 * nor given up on (their job was lost with a flushed Redis, never added while Redis was
 * away, or failed all its retries, or its worker died); the job id being the delivery id,
 * one still queued or retrying is not added twice, and one whose job failed without the
 * delivery being given up on is added again — until DELIVERY_MAX_ATTEMPTS attempts were
 * begun in all, counted in the delivery's row, when processDelivery gives it up. The schedule is
 * upserted again every interval, as the run sweeper's is.
 */
export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { work, queue, logger } = options;
  const worker = new Worker<DeliveryJob>(
    DELIVERY_QUEUE,
    async (job: Job<DeliveryJob>) => {
      if (job.name === RECONCILE_JOB) return reconcile();
      try {
        return await processDelivery(work, { deliveryId: job.data.deliveryId });
      } catch (error) {
        if (error instanceof UnreadablePayloadError) throw new UnrecoverableError(error.message);
        throw error;
      }
    },
    {
      connection: { url: options.redisUrl, maxRetriesPerRequest: null },
      prefix: options.prefix,
      concurrency: options.concurrency ?? 8,
    },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'delivery worker: Redis error'));

  async function reconcile(): Promise<number> {
    const ids = await listUnprocessedDeliveries({
      db: work.db,
      olderThanMs: RECONCILE_AFTER_MS,
      limit: RECONCILE_BATCH,
    });
    for (const deliveryId of ids) {
      await dropFinishedJob(queue, deliveryId, logger);
      await enqueueDelivery(queue, deliveryId, logger);
    }
    if (ids.length > 0) logger.info({ deliveries: ids.length }, 'unprocessed deliveries enqueued again');
    return ids.length;
  }

  const stopScheduling = await keepJobScheduled({
    queue,
    schedulerId: RECONCILE_JOB,
    everyMs: options.reconcileEveryMs,
    data: { deliveryId: '' },
    what: 'the delivery reconciler schedule',
    logger,
  });

  return {
    close: async () => {
      stopScheduling();
      await worker.close();
    },
  };
}
