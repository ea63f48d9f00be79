import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Database } from '../store/db/database.js';
import { beatControlPlane } from '../store/leases/control-plane-beat.js';
import { sweepRuns, type SweepResult } from '../store/leases/sweep-runs.js';
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
 * allow) runs whose lease ran out (once the control plane has been available for a lease's
 * time to live: see leaseGraceOf), timing out runs past their limit and expiring runs
 * queued too long, and fixing the baselines of the runs it ended. Every replica's sweeper
 * beats the control plane's availability (beatControlPlane) at start and every quarter of
 * the outage bound, whether or not the sweeps run on it. The schedule is kept (keepJobScheduled), so a Redis that was flushed
 * or failed over resumes sweeping by itself; a sweep that requeued runs rings the
 * doorbell so waiting runners claim them.
 */
export async function startRunSweeper({
  db,
  settings,
  doorbell,
  logger,
  onRunChanged,
  onSwept,
}: {
  db: Database;
  settings: ControlPlaneSettings;
  doorbell: RunDoorbell;
  logger: Logger;
  /** Called with each run a sweep changed (its waiting reason included), for its check run. */
  onRunChanged?: (runId: string) => void;
  /** Called after each sweep this process ran, with what it changed. */
  onSwept?: (swept: SweepResult) => void;
}): Promise<RunSweeper> {
  const leaseGrace = leaseGraceOf(settings);
  const beat = (): Promise<void> => beatControlPlane({ db, outageAfterMs: leaseGrace.outageAfterMs });
  await beat();
  const beats = setInterval(() => {
    beat().catch((error: unknown) => logger.warn({ err: error }, 'could not record the control plane beat'));
  }, leaseGrace.outageAfterMs / 4);
  beats.unref();
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
          leaseGrace,
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
      onSwept?.(swept);
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
      clearInterval(beats);
      stopScheduling();
      await worker.close();
      await queue.close();
    },
  };
}

/**
 * When an expired lease may be taken back: once the control plane has been available for
 * a whole lease's time to live (`forMs`), so a lease that ran out because an outage kept
 * its runner's heartbeats from arriving gets a whole lease to beat again. An outage is a
 * gap between beats longer than `outageAfterMs`: half of what a runner beating every
 * heartbeat interval can miss without losing its lease. A shorter gap (a process
 * restarted, replicas restarted in turn, a quick crash loop) cost no runner its lease, so
 * it does not start the count again.
 */
export function leaseGraceOf(settings: Pick<ControlPlaneSettings, 'leaseTtlMs' | 'heartbeatIntervalMs'>): {
  forMs: number;
  outageAfterMs: number;
} {
  return {
    forMs: settings.leaseTtlMs,
    outageAfterMs: (settings.leaseTtlMs - settings.heartbeatIntervalMs) / 2,
  };
}
