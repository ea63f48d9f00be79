import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RunChanges, RunChangeTicket } from './pages/run-changes.js';

/** The run bell's pub/sub channel for an installation's key prefix. */
export function runBellChannel(queuePrefix: string): string {
  return `${queuePrefix}:run-changed`;
}

/**
 * Wakes the run pages' live streams of a run when its runner sent events (log lines,
 * points, a stage's start or end) or its state changed, across replicas, over Redis
 * pub/sub (the message is the run's id). Only a bell, as RunDoorbell: a lost ring delays
 * a page until its stream's next look at Postgres, which holds the truth; a ring also
 * wakes this process's own waiters directly.
 */
export class RunBell implements RunChanges {
  private subscriber: Redis | null = null;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly redis: Redis,
    /** The pub/sub channel, under the installation's key prefix. */
    readonly channel: string,
    private readonly logger: Logger,
  ) {}

  /** Subscribes on a connection of its own; does not wait for Redis (streams poll meanwhile). */
  listen(): void {
    if (this.subscriber) return;
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, runId: string) => this.wake(runId));
    subscriber.on('error', (error: Error) => this.logger.warn({ err: error }, 'run bell: Redis error'));
    subscriber.subscribe(this.channel).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'run bell: could not subscribe; live pages rely on their re-checks');
    });
  }

  /** Announces that run `runId` changed. Never rejects; costs nothing while no page of it is open here. */
  async ring(runId: string): Promise<void> {
    this.wake(runId);
    try {
      await this.redis.publish(this.channel, runId);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'run bell: could not publish; pages on other replicas look again soon',
      );
    }
  }

  /** Tickets held right now: live streams of this process reading or waiting for their run's next change. */
  get waiting(): number {
    let count = 0;
    for (const forRun of this.waiters.values()) count += forRun.size;
    return count;
  }

  take(runId: string): RunChangeTicket {
    let rang = false;
    let wake: () => void = () => {};
    const waiter = (): void => {
      rang = true;
      wake();
    };
    let forRun = this.waiters.get(runId);
    if (!forRun) this.waiters.set(runId, (forRun = new Set()));
    forRun.add(waiter);
    const leave = (): void => {
      forRun.delete(waiter);
      if (forRun.size === 0 && this.waiters.get(runId) === forRun) this.waiters.delete(runId);
    };
    return {
      wait: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (rang || signal?.aborted) {
            leave();
            resolve();
            return;
          }
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            leave();
            resolve();
          };
          const timer = setTimeout(done, ms);
          wake = done;
          signal?.addEventListener('abort', done, { once: true });
        }),
      cancel: leave,
    };
  }

  /** Unsubscribes and wakes every waiter. */
  async close(): Promise<void> {
    for (const runId of [...this.waiters.keys()]) this.wake(runId);
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private wake(runId: string): void {
    for (const waiter of [...(this.waiters.get(runId) ?? [])]) waiter();
  }
}
