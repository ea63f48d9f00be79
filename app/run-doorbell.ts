import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** The doorbell's pub/sub channel for an installation's key prefix. */
export function doorbellChannel(queuePrefix: string): string {
  return `${queuePrefix}:runs-claimable`;
}

/** A wait registered before looking for work, so a ring during the look is not missed. */
export interface DoorbellTicket {
  /** Resolves at the first ring since the ticket was taken, after `ms`, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** Gives the ticket back, ending a wait in progress. */
  cancel(): void;
}

/**
 * Wakes waiting claims when a run becomes claimable (queued, released, requeued), across
 * replicas, over Redis pub/sub. Only a doorbell: a ring that is lost (Redis down or
 * flushed) delays a claim until its next look at Postgres, which holds the truth, and
 * never loses a run. A ring also wakes this process's own waiters directly.
 */
export class RunDoorbell {
  private subscriber: Redis | null = null;
  private readonly waiters = new Set<() => void>();
  private waiting = 0;

  constructor(
    private readonly redis: Redis,
    /** The pub/sub channel, under the installation's key prefix. */
    readonly channel: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Subscribes on a connection of its own (a subscribed connection can do nothing else).
   * Does not wait for Redis: while it is unreachable, claims still look at Postgres at
   * every re-check, and the connection subscribes again by itself when Redis is back.
   */
  listen(): void {
    if (this.subscriber) return;
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', () => this.wakeAll());
    subscriber.on('error', (error: Error) => this.logger.warn({ err: error }, 'run doorbell: Redis error'));
    subscriber.subscribe(this.channel).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'run doorbell: could not subscribe; claims rely on their re-checks');
    });
  }

  /** Announces that a run may be claimable now. Never rejects. */
  async ring(): Promise<void> {
    this.wakeAll();
    try {
      await this.redis.publish(this.channel, 'run');
    } catch (error) {
      this.logger.warn(
        { err: error },
        'run doorbell: could not publish; other replicas will find the run at their next look',
      );
    }
  }

  /** Tickets waiting for a ring right now: claims parked in this process with nothing to take. */
  get parked(): number {
    return this.waiting;
  }

  take(): DoorbellTicket {
    let rang = false;
    let wake: () => void = () => {};
    const waiter = (): void => {
      rang = true;
      wake();
    };
    this.waiters.add(waiter);
    return {
      wait: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (rang || signal?.aborted) {
            this.waiters.delete(waiter);
            resolve();
            return;
          }
          this.waiting += 1;
          let finished = false;
          const done = (): void => {
            if (finished) return;
            finished = true;
            this.waiting -= 1;
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            this.waiters.delete(waiter);
            resolve();
          };
          const timer = setTimeout(done, ms);
          wake = done;
          signal?.addEventListener('abort', done, { once: true });
        }),
      cancel: () => {
        this.waiters.delete(waiter);
        // A wait in progress ends now rather than at its timer.
        wake();
      },
    };
  }

  /** Unsubscribes and wakes every waiter. */
  async close(): Promise<void> {
    this.wakeAll();
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
