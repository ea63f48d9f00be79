import type { HeartbeatReply } from '../../schemas/protocol/lease-requests.js';
import type { ControlPlaneClient, RunLease } from '../../client/control-plane-client.js';
import { isLeaseLost } from '../../client/control-plane-errors.js';

export interface LeaseKeeperOptions {
  client: ControlPlaneClient;
  run: RunLease;
  /** How often to heartbeat (the claim's `heartbeatIntervalMs`). */
  intervalMs: number;
  /** The control plane asked to stop the run (a user's cancel, the run's timeout). Told once. */
  onCancel(reply: HeartbeatReply & { cancel: true }): void;
  /** The lease is gone (409, 403, 404): the run is no longer this runner's. Told once. */
  onLeaseLost(error: unknown): void;
  /** A heartbeat failed for another reason (the control plane unreachable); the next one tries again. */
  onError?(error: unknown): void;
}

/**
 * Keeps a claimed run's lease alive (DESIGN §6): a heartbeat at once, then one every
 * interval, never two at a time. A heartbeat's reply is where a cancel reaches the
 * runner. A heartbeat that fails transiently is retried briefly, then left to the next
 * beat: the sweeper only abandons a run after several missed intervals.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();
  private readonly stopped = new AbortController();
  private cancelled = false;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.beat();
  }

  /** Stops heartbeating; resolves once the heartbeat in flight, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.beating;
  }

  private beat(): void {
    const { client, run, intervalMs } = this.options;
    this.beating = (async () => {
      try {
        const reply = await client.heartbeat(run, { retries: 2, signal: this.stopped.signal });
        if (reply.cancel && !this.cancelled) {
          this.cancelled = true;
          this.options.onCancel({ ...reply, cancel: true });
        }
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        if (isLeaseLost(error)) {
          this.stopped.abort();
          this.options.onLeaseLost(error);
          return;
        }
        this.options.onError?.(error);
      }
      if (!this.stopped.signal.aborted) this.timer = setTimeout(() => this.beat(), intervalMs);
    })();
  }
}
