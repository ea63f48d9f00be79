import type { ServerResponse } from 'node:http';
import type { LogChunk } from '../../schemas/page-data.js';

/** A read of a stage's log from an offset, as PageSource.stageLog answers. */
type LogRead = (LogChunk & { final: boolean }) | null;

/** A comment line keeps proxies from closing a quiet stream (most cut idle ones at 60 s). */
const KEEPALIVE_MS = 15_000;

/**
 * Streams a stage's log as server-sent events: each batch of new lines is one `lines`
 * event whose id is the offset after it, so an EventSource that reconnects resends it as
 * Last-Event-ID and continues where it stopped; an `end` event once the run is over and
 * every line was sent. Polls `next` every `pollMs` while the run goes on, and stops when
 * the client goes away.
 */
export async function streamStageLog({
  response,
  first,
  next,
  pollMs,
  signal,
  onError,
}: {
  response: ServerResponse;
  first: LogChunk & { final: boolean };
  next: (offset: number) => Promise<LogRead>;
  pollMs: number;
  /** Aborted when the server closes: the stream ends, and the client reconnects elsewhere. */
  signal: AbortSignal;
  onError: (error: unknown) => void;
}): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.write('retry: 1000\n\n');
  let closed = false;
  response.on('close', () => {
    closed = true;
  });
  const stop = (): void => {
    closed = true;
  };
  signal.addEventListener('abort', stop);
  let offset = first.from;
  let read: LogRead = first;
  let quietSince = Date.now();
  try {
    while (!closed && !signal.aborted && read !== null) {
      if (read.lines.length > 0) {
        offset += read.lines.length;
        response.write(
          `id: ${offset}\nevent: lines\ndata: ${JSON.stringify({ from: read.from, lines: read.lines })}\n\n`,
        );
        quietSince = Date.now();
      }
      if (read.final) {
        response.write(`event: end\ndata: ${JSON.stringify({ lines: offset })}\n\n`);
        break;
      }
      if (Date.now() - quietSince > KEEPALIVE_MS) {
        response.write(': keep-alive\n\n');
        quietSince = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      if (closed || signal.aborted) break;
      read = await next(offset);
    }
  } catch (error) {
    onError(error);
  } finally {
    signal.removeEventListener('abort', stop);
    response.end();
  }
}
