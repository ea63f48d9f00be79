import type { HeartbeatReply } from '../../schemas/protocol/lease-requests.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { isLeaseLost } from '../../client/control-plane-errors.js';
import { watchForCancel } from './watch-for-cancel.js';

/** Where a cancel reached the runner: its parked watch, or a heartbeat's reply. */
export type CancelPath = 'watch' | 'heartbeat';

export interface LeaseKeeperOptions {
  client: ControlPlaneClient;
  run: RunLease;
  /** How often to heartbeat (the claim's `heartbeatIntervalMs`). */
  intervalMs: number;
  /** The control plane asked to stop the run (a user's cancel, the run's timeout). Told once. */
  onCancel(reply: HeartbeatReply & { cancel: true }, via: CancelPath): void;
  /** The lease is gone (409, 403, 404): the run is no longer this runner's. Told once. */
  onLeaseLost(error: unknown): void;
  /** A heartbeat failed for another reason (the control plane unreachable); the next one tries again. */
  onError?(error: unknown): void;
  /** The control plane refused the watch (watch-for-cancel.ts): a cancel now comes with a heartbeat. */
  onWatchRefused?(error: unknown): void;
}

/**
 * Keeps a claimed run's lease alive (DESIGN §6) and hears its cancel: a heartbeat at once,
 * then one every interval, never two at a time, and meanwhile a watch parked at the control
 * plane that answers as soon as the run is cancelled (watch-for-cancel.ts). A cancel comes
 * through whichever hears first; a heartbeat's reply is the fallback when the watch is
 * refused or its wake-up lost. A heartbeat that fails transiently is retried briefly, then
 * left to the next beat: the sweeper only abandons a run after several missed intervals.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();
  private watching: Promise<void> = Promise.resolve();
  private readonly stopped = new AbortController();
  private cancelled = false;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.beat();
    const { client, run } = this.options;
    this.watching = watchForCancel({
      client,
      run,
      signal: this.stopped.signal,
      onCancel: (reply) => this.cancel(reply, 'watch'),
      onLeaseLost: (error) => this.leaseLost(error),
      onRefused: (error) => this.options.onWatchRefused?.(error),
    });
  }

  /** Stops heartbeating and watching; resolves once the requests in flight have ended. */
  async stop(): Promise<void> {
    this.stopped.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([this.beating, this.watching]);
  }

  private cancel(reply: HeartbeatReply & { cancel: true }, via: CancelPath): void {
    if (this.cancelled || this.stopped.signal.aborted) return;
    this.cancelled = true;
    this.options.onCancel(reply, via);
  }

  private leaseLost(error: unknown): void {
    if (this.stopped.signal.aborted) return;
    this.stopped.abort();
    this.options.onLeaseLost(error);
  }

  private beat(): void {
    const { client, run, intervalMs } = this.options;
    this.beating = (async () => {
      try {
        const reply = await client.heartbeat(run, { retries: 2, signal: this.stopped.signal });
        if (reply.cancel) this.cancel({ ...reply, cancel: true }, 'heartbeat');
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        if (isLeaseLost(error)) {
          this.leaseLost(error);
          return;
        }
        this.options.onError?.(error);
      }
      if (!this.stopped.signal.aborted) this.timer = setTimeout(() => this.beat(), intervalMs);
    })();
  }
}
