import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Database } from '../store/db/database.js';
import { sweepRuns } from '../store/leases/sweep-runs.js';
import { fixRunBaseline } from '../store/runs/fix-run-baseline.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import { keepJobScheduled } from './keep-job-scheduled.js';
import type { RunDoorbell } from './run-doorbell.js';

const QUEUE = 'sweeps';
const SCHEDULER_ID = 'sweep-runs';

export interface RunSweeper {
  /** Stops re-ensuring the schedule and closes the worker (waiting for a sweep in progress). */
  close(): Promise<void>;
}

/**
 * Starts the sweeper (DESIGN §6): a BullMQ job scheduler runs `sweepRuns` every sweep
 * interval on one of the replicas' workers, abandoning (and requeuing, while retries
 * allow) runs whose lease ran out (once this process has been up for a lease's time to
 * live, so runners cut off by its outage renew theirs first), timing out runs past their limit and expiring runs
 * queued too long, and fixing the baselines of the runs it ended. The schedule is kept (keepJobScheduled), so a Redis that was flushed
 * or failed over resumes sweeping by itself; a sweep that requeued runs rings the
 * doorbell so waiting runners claim them.
 */
export async function startRunSweeper({
  db,
  settings,
  doorbell,
  logger,
  onRunChanged,
}: {
  db: Database;
  settings: ControlPlaneSettings;
  doorbell: RunDoorbell;
  logger: Logger;
  /** Called with each run a sweep changed (its waiting reason included), for its check run. */
  onRunChanged?: (runId: string) => void;
}): Promise<RunSweeper> {
  // A lease that expired while the control plane was down expired because no heartbeat
  // could reach it, not because its runner stopped: each runner gets one whole lease,
  // counted from now, to beat again (its beats are 20 s apart) before its run is taken.
  const startedAt = performance.now();
  const connection = { url: settings.redisUrl, maxRetriesPerRequest: null };
  const queue = new Queue(QUEUE, { connection, prefix: settings.queuePrefix });
  queue.on('error', (error) => logger.warn({ err: error }, 'sweeper queue: Redis error'));
  const worker = new Worker(
    QUEUE,
    async () => {
      const swept = await sweepRuns({
        db,
        settings: {
          onlineWindowMs: settings.onlineWindowMs,
          queueTimeoutMs: settings.queueTimeoutMs,
          judgeLeases: performance.now() - startedAt >= settings.leaseTtlMs,
        },
      });
      for (const [change, runIds] of Object.entries(swept)) {
        for (const runId of runIds) {
          logger.info({ runId, change }, 'run swept');
          onRunChanged?.(runId);
        }
      }
      // Runs a sweep ended never reach the finish route, where a run's baseline is fixed.
      for (const runId of [...swept.abandoned, ...swept.expired, ...swept.cancelled]) {
        await fixRunBaseline({ db, run: { id: runId } }).catch((error: unknown) =>
          logger.warn({ runId, err: error }, 'the baseline of a swept run could not be fixed'),
        );
      }
      if (swept.requeued.length > 0) await doorbell.ring();
      return swept;
    },
    { connection, prefix: settings.queuePrefix, concurrency: 1 },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'sweeper worker: Redis error'));
  worker.on('failed', (_job, error) => logger.error({ err: error }, 'sweep failed'));

  const stopScheduling = await keepJobScheduled({
    queue,
    schedulerId: SCHEDULER_ID,
    everyMs: settings.sweepIntervalMs,
    what: 'the sweep schedule',
    logger,
  });

  return {
    close: async () => {
      stopScheduling();
      await worker.close();
      await queue.close();
    },
  };
}
