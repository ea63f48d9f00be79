import { once } from 'node:events';
import type { ServerResponse } from 'node:http';

/** A comment is sent after this long without an event, so proxies keep the stream open. */
const KEEPALIVE_MS = 15_000;

/**
 * One server-sent-events response of the run pages: opened with its headers and retry
 * delay, `stopped` once the page goes away or the server closes (`signal`), and closed by
 * `close()`. `send` waits while the client has not taken what was sent before (a slow
 * reader holds the next piece), and that wait ends when the client goes away.
 */
export class EventStream {
  private readonly stop = new AbortController();
  private readonly end = (): void => this.stop.abort();
  private quietSince = Date.now();

  constructor(
    private readonly response: ServerResponse,
    private readonly signal: AbortSignal,
  ) {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.write('retry: 1000\n\n');
    response.on('close', this.end);
    signal.addEventListener('abort', this.end);
  }

  /** Aborted when the page went away or the server closes. */
  get stopped(): AbortSignal {
    return this.stop.signal;
  }

  /** Sends one event (with its id when given), waiting until the client can take more. */
  async send(event: string, data: string, id?: string): Promise<void> {
    const written = this.response.write(
      `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`,
    );
    this.quietSince = Date.now();
    if (written) return;
    await once(this.response, 'drain', { signal: this.stop.signal }).catch((error: unknown) => {
      if (!this.stop.signal.aborted) throw error;
    });
  }

  /** Sends a keep-alive comment when nothing was sent for a while. */
  keepAlive(): void {
    if (Date.now() - this.quietSince <= KEEPALIVE_MS) return;
    this.response.write(': keep-alive\n\n');
    this.quietSince = Date.now();
  }

  /** Ends the response. */
  close(): void {
    this.signal.removeEventListener('abort', this.end);
    this.response.end();
  }
}
