import type { Database } from '../store/db/database.js';
import type { HeartbeatAnswer } from '../store/leases/heartbeat-run.js';
import { readCancelRequest } from '../store/leases/read-cancel-request.js';
import { HttpError } from './http/http-error.js';
import type { RunBell } from './run-bell.js';

export interface CancelWatchesOptions {
  db: Database;
  /**
   * The run bell, rung by whatever changed a run (a cancel, the sweeper's timeout) in any
   * replica: an instance of the watches' own, so the pages' gauge counts pages only.
   */
  bell: RunBell;
  /** How often a parked watch reads its run again without a ring (`FLUKSIO_CLAIM_RECHECK`). */
  recheckMs: number;
  /**
   * Watches of one run parked in this process at once. A runner keeps one; a second is
   * one it opened again before this process saw the first one's connection close.
   * @defaultValue 2
   */
  perRun?: number;
}

/**
 * The runners' watches parked in this process (`POST /api/v1/runs/:id/watch`): each waits
 * until its run must stop, so a cancel reaches the runner within moments rather than at
 * its next heartbeat. A watch wakes when the run bell rings for its run, over Redis from
 * whichever process changed it, and reads its row again every `recheckMs` regardless: a
 * ring is only a hint, lost when Redis is, and Postgres holds the truth (the heartbeat
 * stays the runner's fallback).
 */
export class CancelWatches {
  private readonly open = new Map<string, number>();
  private readonly perRun: number;
  private waiting = 0;

  constructor(private readonly options: CancelWatchesOptions) {
    this.perRun = options.perRun ?? 2;
    if (!(this.perRun > 0)) throw new Error('perRun must be greater than 0');
    if (!(options.recheckMs > 0)) throw new Error('recheckMs must be greater than 0');
  }

  /** Watches waiting for a ring right now (between their reads of the database). */
  get parked(): number {
    return this.waiting;
  }

  /**
   * Waits up to `waitMs` for run `runId`, held under `leaseId`, to be asked to stop, and
   * answers as a heartbeat does (without renewing the lease); at once when it already is.
   * Null when the lease is not the run's (any more) or the run is no longer running. Ends
   * early, answering what the row says, when `signal` aborts (the runner hung up, or the
   * server is closing). 429 when `perRun` watches of the run are parked here already.
   */
  async watch({
    runId,
    leaseId,
    waitMs,
    signal,
  }: {
    runId: string;
    leaseId: string;
    waitMs: number;
    signal: AbortSignal;
  }): Promise<HeartbeatAnswer | null> {
    const open = this.open.get(runId) ?? 0;
    if (open >= this.perRun) {
      throw new HttpError(
        429,
        `Run ${runId} has ${open} watches parked on this control plane already, the most it keeps; ask again once one has answered`,
      );
    }
    this.open.set(runId, open + 1);
    try {
      return await this.waitForCancel(runId, leaseId, Date.now() + waitMs, signal);
    } finally {
      const left = (this.open.get(runId) ?? 1) - 1;
      if (left > 0) this.open.set(runId, left);
      else this.open.delete(runId);
    }
  }

  private async waitForCancel(
    runId: string,
    leaseId: string,
    deadline: number,
    signal: AbortSignal,
  ): Promise<HeartbeatAnswer | null> {
    const { db, bell, recheckMs } = this.options;
    for (;;) {
      // Taken before the read, so a ring while the row is read is not missed.
      const ticket = bell.take(runId);
      const answer = await readCancelRequest({ db, runId, leaseId });
      const remaining = deadline - Date.now();
      if (!answer || answer.cancel || remaining <= 0 || signal.aborted) {
        ticket.cancel();
        return answer;
      }
      this.waiting += 1;
      try {
        await ticket.wait(Math.min(remaining, recheckMs), signal);
      } finally {
        this.waiting -= 1;
      }
    }
  }
}
