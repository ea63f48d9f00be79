import type { RunEvent } from '../schemas/run-event.js';

/**
 * Numbered events waiting for their delivery, oldest first (BatchingEventSink's queue):
 * in memory by default, or spilled to disk (daemon/spooled-event-queue.ts) where the wait
 * can be long.
 */
export interface EventQueue {
  /** Events waiting. */
  readonly length: number;
  push(event: RunEvent): void;
  /** The first `count` events, oldest first, left in place until dropped. */
  peek(count: number): RunEvent[];
  /** Removes the first `count` events: they were delivered. */
  drop(count: number): void;
}

/** An EventQueue in memory, without a bound: for local runs, whose deliveries are writes to disk. */
export function memoryEventQueue(): EventQueue {
  const events: RunEvent[] = [];
  return {
    get length() {
      return events.length;
    },
    push: (event) => void events.push(event),
    peek: (count) => events.slice(0, count),
    drop: (count) => void events.splice(0, count),
  };
}
