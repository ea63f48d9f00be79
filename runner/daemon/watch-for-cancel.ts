import { setTimeout as sleep } from 'node:timers/promises';
import type { HeartbeatReply } from '../../schemas/protocol/lease-requests.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { StaleLeaseError } from '../../client/control-plane-errors.js';

/** How long one watch waits at the control plane: well under the minute proxies let a request idle. */
const WATCH_SECONDS = 25;

/** The least time between two watches, so a control plane answering at once is not asked in a busy loop. */
const MIN_WATCH_INTERVAL_MS = 1000;

export interface WatchForCancelOptions {
  client: ControlPlaneClient;
  run: RunLease;
  /** Ends the watch (the run ended, or the runner stops). */
  signal: AbortSignal;
  /** The control plane asked to stop the run; the watch has ended. */
  onCancel(reply: HeartbeatReply & { cancel: true }): void;
  /** The lease is stale (409); the watch has ended. */
  onLeaseLost(error: unknown): void;
  /**
   * The control plane refused the watch for another reason (one without the route answers
   * 404); the watch has ended, and the run's heartbeats still bring a cancel.
   */
  onRefused(error: unknown): void;
}

/**
 * Keeps a long-poll open at the control plane for the cancel of a held run (a user's, or
 * its time limit: `POST /api/v1/runs/:id/watch`), asking again whenever one answers with
 * nothing to do, until a cancel comes, the lease is lost or `signal` aborts. This is how
 * a cancel reaches a running stage within moments; the heartbeat's reply remains the
 * fallback. Transient failures (the control plane restarting) are retried with backoff
 * for as long as the watch lasts.
 */
export async function watchForCancel(options: WatchForCancelOptions): Promise<void> {
  const { client, run, signal } = options;
  while (!signal.aborted) {
    const opened = Date.now();
    try {
      const reply = await client.watch(run, WATCH_SECONDS, { retries: Infinity, signal });
      if (reply.cancel) {
        options.onCancel({ ...reply, cancel: true });
        return;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof StaleLeaseError) options.onLeaseLost(error);
      else options.onRefused(error);
      return;
    }
    const rest = MIN_WATCH_INTERVAL_MS - (Date.now() - opened);
    if (rest > 0) await sleep(rest, undefined, { signal }).catch(() => undefined);
  }
}
