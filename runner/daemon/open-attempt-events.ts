import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { ControlPlaneError, isLeaseLost } from '../../client/control-plane-errors.js';
import { keptStageEnds } from './kept-stage-ends.js';
import { readEventJournal } from './read-event-journal.js';
import { RemoteEventSink } from './remote-event-sink.js';

export interface OpenAttemptEventsOptions {
  client: ControlPlaneClient;
  run: RunLease;
  runId: string;
  attempt: number;
  /** The attempt was started before its runner was restarted: its journal is read back. */
  resumedStarted: boolean;
  /** What the control plane has of a resumed attempt (ExecuteClaimOptions.resumed). @defaultValue a fresh claim */
  resumed?: { nextSeq: number; finished?: readonly StageRecord[] };
  /** Where the attempt's events are journaled until acknowledged, or null for no journal. */
  journalFile: string | null;
  /** Where the events wait on disk past `maxMemoryBytes` of them in memory. */
  spool: { dir: string; maxMemoryBytes: number };
  /** Ends the retrying of a delivery (RemoteEventSinkOptions.signal). */
  signal: AbortSignal;
  logger: Logger;
  /** Told, with the sentence to fail the run with, when the control plane refused the events for good. */
  onRefused(reason: string): void;
}

/** A run attempt's event sink, and the stages it keeps as finished. */
export interface AttemptEvents {
  events: RemoteEventSink;
  /** The stages the attempt keeps as finished (keptStageEnds): recorded in `resumed`, or ended in the journal. */
  finished: StageRecord[];
}

/**
 * Opens the event sink of a claimed run's attempt (execute-claim.ts): a resumed attempt's
 * journal read back first, its unsent events sent before any new one; a fresh attempt's
 * journal, if any was left, removed.
 */
export async function openAttemptEvents(options: OpenAttemptEventsOptions): Promise<AttemptEvents> {
  const { client, run, journalFile, resumedStarted, logger } = options;
  // What the process killed before this one emitted and the control plane never stored:
  // sent first, and the stages whose end it holds are kept as finished, not run again.
  const unsent =
    journalFile && resumedStarted
      ? await readEventJournal(journalFile, options.resumed?.nextSeq ?? 0, (error) =>
          logger.warn(
            { err: error, journal: journalFile },
            'the event journal could not be read: the stages whose end it holds run again',
          ),
        )
      : [];
  if (journalFile && !resumedStarted) await rm(journalFile, { force: true });
  const finished = keptStageEnds(options.resumed?.finished ?? [], unsent);
  if (unsent.length > 0) {
    logger.info(
      {
        events: unsent.length,
        stages: finished.slice(options.resumed?.finished?.length ?? 0).map((record) => record.name),
      },
      'sending the events the runner had not sent before it was restarted',
    );
  }
  const events = new RemoteEventSink({
    client,
    run,
    attempt: options.attempt,
    firstSeq: options.resumed?.nextSeq ?? 0,
    unsent,
    ...(journalFile
      ? {
          journal: {
            file: journalFile,
            onJournalRefused: (error: unknown) =>
              logger.warn(
                { err: error, journal: journalFile },
                'the event journal could not be written (a full disk?): a restart may run again what the unsent events record',
              ),
          },
        }
      : {}),
    spool: {
      file: path.join(options.spool.dir, `${options.runId}-${options.attempt}.jsonl`),
      maxMemoryBytes: options.spool.maxMemoryBytes,
      onSpoolRefused: (error) =>
        logger.warn(
          { err: error, spool: options.spool.dir },
          'the event spool could not be written (a full disk?): events wait in memory until it can be',
        ),
    },
    signal: options.signal,
    onError: (error) => {
      logger.warn({ err: error }, 'event upload stopped');
      // Sending the same events again would be refused again: stop the run now
      // rather than after its last stage, and fail it with the control plane's sentence.
      if (error instanceof ControlPlaneError && !isLeaseLost(error)) {
        options.onRefused(`The control plane refused the run's events: ${error.message}`);
      }
    },
  });
  return { events, finished };
}
