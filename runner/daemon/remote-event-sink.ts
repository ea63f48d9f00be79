import { EVENT_BATCH_MAX_BYTES } from '../../schemas/protocol/lease-requests.js';
import type { RunEvent, RunEventBody } from '../../schemas/run-event.js';
import { BatchingEventSink } from '../output/batching-event-sink.js';
import type { EventSink } from '../ports.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { memoryEventQueue } from '../event-queue.js';
import { JournaledEventQueue } from './journaled-event-queue.js';
import { SpooledEventQueue, type SpooledEventQueueOptions } from './spooled-event-queue.js';

export interface RemoteEventSinkOptions {
  client: ControlPlaneClient;
  run: RunLease;
  /** The run's attempt: events are applied once per `(run, attempt, seq)`. */
  attempt: number;
  /**
   * The first event's seq: a run resumed in the same attempt after its runner was restarted
   * continues the attempt's numbering where the control plane's stored events end.
   * @defaultValue 0
   */
  firstSeq?: number;
  /**
   * Ends the retrying of a delivery: the lease is gone, or the runner is stopping and
   * can wait no longer. Without it, a delivery is retried until it is acknowledged.
   */
  signal?: AbortSignal;
  /** Told about each delivery that failed for good (the batch stays queued). */
  onError?(error: unknown): void;
  /**
   * How long a log line or metric point waits for more of its kind to travel with: at
   * most this, and 20 ms for one that follows a quiet spell (nothing handed on for this
   * long), so a line printed after a pause reaches a live page at once. @defaultValue 100
   */
  mergeDelayMs?: number;
  /** Events in one request. @defaultValue 50 */
  maxBatch?: number;
  /**
   * Where events wait while the control plane does not take them: past `maxMemoryBytes`
   * they go to `file` (spooled-event-queue.ts), or wait in memory while its disk is full
   * (`onSpoolRefused`). Without it they all wait in memory. @defaultValue none
   */
  spool?: SpooledEventQueueOptions;
  /**
   * Where each event is also written until it is acknowledged (journaled-event-queue.ts),
   * for the runner started after a kill to send. @defaultValue none
   */
  journal?: { file: string; onJournalRefused?(error: unknown): void };
  /**
   * Events the attempt numbered before its runner was killed and the control plane never
   * stored (read-event-journal.ts): sent first, as they are; `firstSeq` then follows them.
   * @defaultValue none
   */
  unsent?: readonly RunEvent[];
}

/**
 * Most text or points one merged event carries (~16 KiB): with at most `maxBatch` events
 * a request stays under the 1 MiB a web server accepts by default.
 */
const MERGED_BYTES = 16 * 1024;
/** How long a line after a quiet spell waits for the rest of its burst. */
const PROMPT_MERGE_MS = 20;
/** What a metric point weighs against that limit, roughly, as JSON. */
const POINT_BYTES = 80;

/**
 * The engine's events uploaded to the control plane (`POST /api/v1/runs/:id/events`).
 * The engine emits one event per log line and per metric point; consecutive lines of a
 * stage, and consecutive points, are merged into one event before they are numbered, so
 * a training loop costs a request per batch, not per step, and a retried batch always
 * carries exactly the events it carried before (the control plane dedupes by seq).
 * Deliveries go one at a time, in order, and are retried with backoff until
 * acknowledged: while the control plane is unreachable, events wait, in memory up to a
 * bound and past it on disk (`spool`).
 *
 * The event being merged is not journaled (`journal`) until it is handed on, so a runner
 * killed hard loses it: that is safe because it is handed on, numbered and journaled
 * before any other event, synchronously — before every `stage.finished` above all. What a
 * kill loses is thus only log lines and points of stages with no end journaled or stored,
 * which the resumed attempt executes again or re-attaches to, reading their job's output
 * again from its start (test/runner-daemon/merged-events-killed.test.ts,
 * test/slurm/slurm-merged-events-kill.test.ts). Merging before numbering also leaves no
 * gap in the seqs for what the kill took.
 */
export class RemoteEventSink implements EventSink {
  private readonly batching: BatchingEventSink;
  private readonly journal: JournaledEventQueue | null;
  private pending: RunEventBody | null = null;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private failure: unknown = null;
  private readonly mergeDelayMs: number;
  /** When the last merged event was handed on (ms since the epoch). */
  private lastRelease = 0;

  constructor(private readonly options: RemoteEventSinkOptions) {
    this.mergeDelayMs = options.mergeDelayMs ?? 100;
    const { client, run, attempt, signal } = options;
    const queue = options.spool ? new SpooledEventQueue(options.spool) : memoryEventQueue();
    this.journal = options.journal ? new JournaledEventQueue({ queue, ...options.journal }) : null;
    this.batching = new BatchingEventSink({
      maxBatch: options.maxBatch ?? 50,
      firstSeq: options.firstSeq ?? 0,
      queue: this.journal ?? queue,
      ...(options.unsent ? { unsent: options.unsent } : {}),
      deliver: async (events) => {
        // A delivery fails only for good (it is retried until `signal` ends it): a refused
        // batch would be refused again, an ended signal stays ended. Each later emit or
        // flush would send the batch once more, as many times as the stopping run emits.
        if (this.failure !== null) throw this.failure;
        // In order, each part acknowledged before the next: a batch retried after a part
        // went through is applied once all the same (the control plane dedupes by seq).
        for (const part of byRequestSize(events)) {
          await client.sendEvents(
            run,
            { attempt, events: part },
            { retries: Infinity, ...(signal ? { signal } : {}) },
          );
        }
      },
      onError: (error) => {
        this.failure = error;
        options.onError?.(error);
      },
    });
  }

  emit(event: RunEventBody): void {
    if (this.pending && mergeable(this.pending, event) && this.pendingBytes + weight(event) <= MERGED_BYTES) {
      if (this.pending.type === 'stage.log' && event.type === 'stage.log')
        this.pending.lines.push(...event.lines);
      if (this.pending.type === 'metric.points' && event.type === 'metric.points')
        this.pending.points.push(...event.points);
      this.pendingBytes += weight(event);
      return;
    }
    this.release();
    if (event.type === 'stage.log') this.pending = { ...event, lines: [...event.lines] };
    else if (event.type === 'metric.points') this.pending = { ...event, points: [...event.points] };
    else return this.batching.emit(event);
    this.pendingBytes = weight(event);
    const due = Math.max(PROMPT_MERGE_MS, this.lastRelease + this.mergeDelayMs - Date.now());
    this.timer = setTimeout(() => this.release(), Math.min(this.mergeDelayMs, due));
  }

  /**
   * Resolves once every event emitted so far is acknowledged; rejects with the error
   * that stopped a delivery (a StaleLeaseError when the lease is gone).
   */
  async flush(): Promise<void> {
    this.release();
    try {
      await this.batching.flush();
    } catch (error) {
      throw this.failure ?? error;
    }
  }

  /** Closes the journal; events emitted later are not journaled. */
  close(): void {
    this.journal?.close();
  }

  /** Hands the event being merged on to be numbered and sent. */
  private release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending) {
      this.batching.emit(this.pending);
      this.lastRelease = Date.now();
    }
    this.pending = null;
    this.pendingBytes = 0;
  }
}

function mergeable(pending: RunEventBody, event: RunEventBody): boolean {
  if (pending.type === 'stage.log') return event.type === 'stage.log' && event.stage === pending.stage;
  return pending.type === 'metric.points' && event.type === 'metric.points';
}

/**
 * A batch in parts of at most half the control plane's limit of JSON each (an event
 * larger than that, such as a 1 MiB line of control characters escaped, goes alone).
 */
function byRequestSize(events: RunEvent[]): RunEvent[][] {
  const parts: RunEvent[][] = [];
  let part: RunEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(JSON.stringify(event)) + 1;
    if (part.length > 0 && bytes + size > EVENT_BATCH_MAX_BYTES / 2) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(event);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

function weight(event: RunEventBody): number {
  if (event.type === 'stage.log') return event.lines.reduce((sum, line) => sum + line.length + 3, 0);
  return event.type === 'metric.points' ? event.points.length * POINT_BYTES : 0;
}
