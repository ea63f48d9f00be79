import type { ServerResponse } from 'node:http';
import type { LogCursor } from '../../schemas/page-data.js';
import { EventStream } from './event-stream.js';
import type { StageLogRead } from './page-source.js';
import type { RunChangeTicket } from './run-changes.js';

/** The SSE event id of a cursor, `line.position`, which parseLogCursor reads back. */
export function formatLogCursor(cursor: LogCursor): string {
  return `${cursor.line}.${cursor.position}`;
}

/** A cursor from an SSE Last-Event-ID or an `after` query (`line.position`); null when it is none. */
export function parseLogCursor(text: string | undefined): LogCursor | null {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(text ?? '');
  return match ? { line: Number(match[1]), position: Number(match[2]) } : null;
}

/**
 * Streams a stage's log as server-sent events: each piece read is one `lines` event whose
 * id is the cursor after it, so an EventSource that reconnects resends it as
 * Last-Event-ID and continues where it stopped; an `end` event once the run is over and
 * every line was sent. A piece that was not the log's end is followed at once by the next
 * (a long log arrives in pieces the page shows as they come); otherwise `next` is asked
 * again at the run's next change (`change`: its runner sent lines), or after `pollMs` at
 * most, while the run goes on. Stops when the client goes away.
 */
export async function streamStageLog({
  response,
  first,
  firstTicket,
  next,
  change,
  pollMs,
  signal,
  onError,
}: {
  response: ServerResponse;
  first: StageLogRead;
  /** Taken before `first` was read, so a change since then ends the first wait. */
  firstTicket: RunChangeTicket;
  next: (cursor: LogCursor) => Promise<StageLogRead | null>;
  /** A wait for the run's next change, taken before each read. */
  change: () => RunChangeTicket;
  pollMs: number;
  /** Aborted when the server closes: the stream ends, and the client reconnects elsewhere. */
  signal: AbortSignal;
  onError: (error: unknown) => void;
}): Promise<void> {
  const stream = new EventStream(response, signal);
  let read: StageLogRead | null = first;
  let ticket = firstTicket;
  try {
    while (!stream.stopped.aborted && read !== null) {
      const cursor: LogCursor = read.next;
      if (read.lines.length > 0) {
        // A slow reader holds the next piece until it has taken this one; a client that
        // goes away while the server waits for it ends the wait.
        await stream.send(
          'lines',
          JSON.stringify({ from: read.from, lines: read.lines }),
          formatLogCursor(cursor),
        );
        if (stream.stopped.aborted) break;
      }
      if (read.final) {
        await stream.send('end', JSON.stringify({ lines: cursor.line }));
        break;
      }
      stream.keepAlive();
      // A full piece means more is stored already: read it now rather than after a change.
      if (read.lines.length === 0) await ticket.wait(pollMs, stream.stopped);
      else ticket.cancel();
      if (stream.stopped.aborted) break;
      ticket = change();
      read = await next(cursor);
    }
  } catch (error) {
    onError(error);
  } finally {
    ticket.cancel();
    stream.close();
  }
}
