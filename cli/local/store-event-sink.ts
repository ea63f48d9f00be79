import { BatchingEventSink } from '../../runner/batching-event-sink.js';
import type { Database } from '../../store/database.js';
import { applyRunEvents } from '../../store/apply-run-events.js';
import { LOCAL_REPOSITORY } from './local-state.js';

/**
 * The engine's events applied to the embedded store in batches, one transaction each.
 * Log lines are not stored row by row locally: the stage's whole log is a blob.
 */
export function storeEventSink(db: Database, runId: string): BatchingEventSink {
  return new BatchingEventSink({
    deliver: (events) =>
      applyRunEvents({
        db,
        runId,
        repository: LOCAL_REPOSITORY,
        trustDomain: 'trusted',
        events: events.filter((event) => event.type !== 'stage.log'),
      }),
  });
}
