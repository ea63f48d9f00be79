import type { EventSink } from './ports.js';

/** Sends every event to each sink; flushes them all. */
export function teeSinks(...sinks: EventSink[]): EventSink {
  return {
    emit: (event) => sinks.forEach((sink) => sink.emit(event)),
    flush: async () => {
      await Promise.all(sinks.map((sink) => sink.flush()));
    },
  };
}
