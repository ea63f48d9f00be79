import type { RunEvent, RunEventBody } from '../../schemas/run-event.js';
import { memoryEventQueue, type EventQueue } from '../event-queue.js';
import type { EventSink } from '../ports.js';

export interface BatchingEventSinkOptions {
  /** Delivers one batch; rejects to have the same batch offered again later. */
  deliver(events: RunEvent[]): Promise<void>;
  /** Deliver once this many events wait. @defaultValue 500 */
  maxBatch?: number;
  /**
   * Deliver at the latest this long after an event arrives, and at most once in this long
   * while events keep coming. @defaultValue 250
   */
  maxDelayMs?: number;
  /**
   * How long an event that follows a quiet spell (no delivery for `maxDelayMs`) waits for
   * the rest of its burst: a line printed after a pause reaches a live page at once.
   * @defaultValue 20
   */
  promptDelayMs?: number;
  /** The first sequence number (a resumed run continues its stream). @defaultValue 0 */
  firstSeq?: number;
  /**
   * Events numbered before, never acknowledged (a resumed run's, from the journal its
   * runner kept before it was killed): delivered first, as they are; the events emitted
   * are numbered after them, from `firstSeq` or past the last of them. @defaultValue none
   */
  unsent?: readonly RunEvent[];
  /** Told when a delivery fails; the batch stays queued. */
  onError?(error: unknown): void;
  /** Where numbered events wait for their delivery. @defaultValue memoryEventQueue() */
  queue?: EventQueue;
}

/**
 * An EventSink that numbers events and hands them on in batches, in order, one
 * delivery at a time: a training loop emitting a metric point per step must not cost
 * a write per step (DESIGN §7). A `stage.finished` event is delivered promptly, since
 * what it records (a cache entry) should be visible to what runs next. Deliveries start at
 * most once per `maxDelayMs`, but an event after a quiet spell goes `promptDelayMs` later,
 * not `maxDelayMs`: batching costs a steady stream its throughput, never a lone line its
 * latency.
 */
export class BatchingEventSink implements EventSink {
  private readonly queue: EventQueue;
  private nextSeq: number;
  private timer: NodeJS.Timeout | null = null;
  private delivering: Promise<void> = Promise.resolve();
  private deliveryActive = false;
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;
  private readonly promptDelayMs: number;
  /** When the last delivery started (ms since the epoch). */
  private lastDelivery = 0;
  /** Why the last delivery failed, for the error that says events were not delivered. */
  private lastError: unknown = null;

  constructor(private readonly options: BatchingEventSinkOptions) {
    this.queue = options.queue ?? memoryEventQueue();
    this.nextSeq = options.firstSeq ?? 0;
    for (const event of options.unsent ?? []) {
      this.queue.push(event);
      this.nextSeq = Math.max(this.nextSeq, event.seq + 1);
    }
    this.maxBatch = options.maxBatch ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 250;
    this.promptDelayMs = Math.min(options.promptDelayMs ?? 20, this.maxDelayMs);
    if (this.queue.length > 0) void this.deliverQueued();
  }

  emit(event: RunEventBody): void {
    this.queue.push({ ...event, seq: this.nextSeq++ } as RunEvent);
    if (event.type === 'stage.finished' || this.queue.length >= this.maxBatch) void this.deliverQueued();
    else if (!this.timer) {
      const due = Math.min(
        this.maxDelayMs,
        Math.max(this.promptDelayMs, this.lastDelivery + this.maxDelayMs - Date.now()),
      );
      this.timer = setTimeout(() => void this.deliverQueued(), due);
    }
  }

  /** Resolves once everything emitted so far is delivered; rejects if a delivery fails. */
  async flush(): Promise<void> {
    await this.deliverQueued();
    if (this.queue.length > 0) {
      const why = this.lastError instanceof Error ? `: ${this.lastError.message}` : '';
      throw new Error(`${this.queue.length} run event(s) could not be delivered${why}`, {
        cause: this.lastError,
      });
    }
  }

  private deliverQueued(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // One delivery loop at a time, which takes what is emitted meanwhile: while the control
    // plane is down, an emit per event must not chain a waiting delivery per event.
    if (this.deliveryActive) return this.delivering;
    this.deliveryActive = true;
    this.lastDelivery = Date.now();
    this.delivering = (async () => {
      try {
        while (this.queue.length > 0) {
          const batch = this.queue.peek(this.maxBatch);
          try {
            await this.options.deliver(batch);
          } catch (error) {
            this.lastError = error;
            this.options.onError?.(error);
            return;
          }
          this.lastError = null;
          this.queue.drop(batch.length);
        }
      } finally {
        this.deliveryActive = false;
      }
    })();
    return this.delivering;
  }
}
