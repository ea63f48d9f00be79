import type { JobSchedulerTemplateOptions, Queue } from 'bullmq';
import type { Logger } from 'pino';

export interface KeepJobScheduledOptions {
  queue: Queue;
  /** The scheduler's id, and the name of the jobs it makes unless `name` says otherwise. */
  schedulerId: string;
  /** @defaultValue schedulerId */
  name?: string;
  everyMs: number;
  /** The data each scheduled job carries. */
  data?: unknown;
  /** What the schedule is for, in the warning logged when re-ensuring it fails. */
  what: string;
  logger: Logger;
}

/** Finished scheduled jobs are removed; a few failed ones are kept to look at. */
const JOB_OPTIONS: JobSchedulerTemplateOptions = { removeOnComplete: true, removeOnFail: 100 };

/**
 * Upserts a BullMQ job scheduler that makes a job every `everyMs`, then upserts it again
 * on the same interval for as long as the process runs: a Redis that was flushed or failed
 * over loses its schedulers, and the periodic work (sweeps, reconcilers) must resume by
 * itself. Upserting is idempotent, so every replica may do it. Resolves, once the first
 * upsert succeeded, with the function that stops re-ensuring.
 */
export async function keepJobScheduled(options: KeepJobScheduledOptions): Promise<() => void> {
  const { queue, schedulerId, everyMs, logger } = options;
  const ensure = async (): Promise<void> => {
    await queue.upsertJobScheduler(
      schedulerId,
      { every: everyMs },
      {
        name: options.name ?? schedulerId,
        ...(options.data !== undefined ? { data: options.data } : {}),
        opts: JOB_OPTIONS,
      },
    );
  };
  await ensure();
  const timer = setInterval(() => {
    ensure().catch((error: unknown) => logger.warn({ err: error }, `could not re-ensure ${options.what}`));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
