import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { attemptSignal } from './attempt-signal.js';

/** An HTTP answer whose status said it is one: its headers, and its body read once. */
export interface HttpAnswer {
  status: number;
  header(name: string): string | null;
  text(): Promise<string>;
  /** The body as a stream; the attempt's time limit still runs while it is read. */
  stream(): Readable;
  /** Drops the body unread. */
  discard(): void;
}

/** One request by undici under `timeoutMs` and `signal`; the answer's body keeps the time limit until it is read. */
export async function exchange(
  url: URL,
  options: {
    method: string;
    headers: Record<string, string>;
    body: string | Uint8Array | Readable | undefined;
    signal: AbortSignal | undefined;
    timeoutMs: number;
  },
): Promise<HttpAnswer> {
  const limit = attemptSignal(options.signal, options.timeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await undiciRequest(url, {
      method: options.method as Dispatcher.HttpMethod,
      headers: options.headers,
      body: options.body ?? null,
      // Besides undici's own limits (5 minutes for the headers, or between two chunks of a
      // body: a stalled transfer is retried long before a blob's hour is up).
      signal: limit.signal,
    });
  } catch (error) {
    limit.release();
    throw error;
  }
  const { statusCode, headers, body } = response;
  body.once('close', limit.release);
  // Nothing to read: the connection goes back to the pool now, and the timer stops. The
  // answer's body is then empty: undici's, once dumped, must not be read again (a read
  // throws outside any promise, in a microtask: an uncaught exception, and the read never
  // settles), and the status of a HEAD answered 5xx is read as an error with its text.
  const empty = statusCode === 204 || options.method === 'HEAD';
  if (empty) await body.dump();
  return {
    status: statusCode,
    header(name) {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
    },
    text: () => (empty ? Promise.resolve('') : body.text()),
    stream: () => (empty ? Readable.from([]) : body),
    discard() {
      if (!empty) body.dump().catch(() => {});
    },
  };
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** A body undici can send: bytes as they are, a web stream as a Node stream. */
export function bodyOf(data: Uint8Array | WebReadableStream<Uint8Array>): Uint8Array | Readable {
  return data instanceof Uint8Array ? data : Readable.fromWeb(data);
}
