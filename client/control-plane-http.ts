import type { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import pRetry from 'p-retry';
import type { z } from 'zod';
import { FLUKSIO_VERSION } from '../core/fluksio-version.js';
import { fluksioUserAgent } from '../schemas/protocol/fluksio-user-agent.js';
import { PROTOCOL_HEADER, PROTOCOL_VERSION } from '../schemas/protocol/protocol-version.js';
import { bodyOf, exchange, isSuccess, type HttpAnswer } from './http-exchange.js';
import { olderProtocolError } from './older-protocol-error.js';
import { redactUrl } from './redact-url.js';
import { ControlPlaneError, ControlPlaneUnreachableError } from './control-plane-errors.js';
import {
  describeNetworkError,
  errorFor,
  isTransient,
  redirectError,
  TransientResponseError,
} from './answer-errors.js';

/** Who is asking, for the control plane's logs: this fluksio's version and protocol, and the platform. */
const USER_AGENT = fluksioUserAgent({
  version: FLUKSIO_VERSION,
  protocol: PROTOCOL_VERSION,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
});

export interface ControlPlaneHttpOptions {
  /** The control plane's base URL, e.g. `https://fluksio.example.com`. */
  url: string;
  /** The runner token or the API token. Sent only as `Authorization: Bearer`, never in a URL or a message. */
  token: string;
  /** Retries of a request that failed transiently (refused, reset, timed out, 5xx, 408, 429). @defaultValue 5 */
  retries?: number;
  /** Delay before the first retry; it doubles with each one. @defaultValue 500 */
  minRetryDelayMs?: number;
  /** The longest delay between two retries. @defaultValue 15000 */
  maxRetryDelayMs?: number;
  /** One attempt's time limit, unless a request sets its own. @defaultValue 30000 */
  requestTimeoutMs?: number;
  /**
   * How long a persisting call (`CallOptions.persist`) retries past its budget: an outage
   * of the control plane outlasts no run, but a request it fails for ever (a 500 of a bug
   * on one payload) must end somewhere, with the run's reason. @defaultValue 3600000 (1 hour)
   */
  maxPersistMs?: number;
  /** Told about each transient failure before it is retried (for a log line). */
  onRetry?(info: { request: string; attempt: number; error: Error }): void;
}

/** Per call: cancel it, or give it its own retry budget (`Infinity`: until it succeeds). */
export interface CallOptions {
  signal?: AbortSignal;
  retries?: number;
  /**
   * While this signal has not ended, transient failures are retried past the budget (the
   * backoff capped at the longest delay), for up to `maxPersistMs` from the first attempt:
   * a result that must not be lost to an outage of the control plane, such as a run's
   * finish or a stage's outs. Once it ended, the call's budget (`retries`) applies again,
   * counted from its first attempt; unlike `signal`, it never cuts an attempt short.
   */
  persist?: AbortSignal;
}

/** One request: its JSON or bytes, the run headers, and what counts as an answer. */
export interface SendOptions {
  json?: unknown;
  body?: { data: Uint8Array | WebReadableStream<Uint8Array>; size: number };
  /** Sent as `X-Fluksio-Lease` and `X-Fluksio-Run` (cache and blob requests). */
  lease?: { runId: string; lease: string };
  /** A 404 is an answer (absent), not an error. */
  allowNotFound?: boolean;
  /** More headers (`Idempotency-Key`). */
  headers?: Record<string, string>;
  timeoutMs?: number;
  /**
   * A `307` is an answer: the control plane sends a blob's reader to the store's presigned
   * URL, which storeAttempt then fetches without the token.
   */
  allowStoreRedirect?: boolean;
}

/** One request straight to a blob store's presigned URL: no token goes along. */
export interface StoreRequest {
  headers?: Record<string, string>;
  body?: { data: Uint8Array | WebReadableStream<Uint8Array>; size: number };
  allowNotFound?: boolean;
  signal: AbortSignal | undefined;
  timeoutMs: number;
}

/**
 * HTTP to the control plane, as the protocol's errors and retries need it: the token
 * in the Authorization header and nowhere else, no redirects (one could carry the
 * header elsewhere), transient failures (connection refused or reset, timeouts, 5xx,
 * 429) retried with exponential backoff by p-retry, and every other status turned into
 * the error class callers branch on (control-plane-errors.ts). Every request names the
 * protocol it speaks (`X-Fluksio-Protocol`) and this fluksio (`User-Agent`); a control
 * plane of another protocol — one answering 426, or naming an older protocol than this
 * one — is a ProtocolMismatchError, never retried. Paths are appended to the
 * URL's own path, so a control plane may be served under one (`https://host/fluksio`).
 */
export class ControlPlaneHttp {
  readonly base: URL;
  readonly requestTimeoutMs: number;
  private readonly retries: number;
  private readonly minRetryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxPersistMs: number;

  constructor(private readonly options: ControlPlaneHttpOptions) {
    this.base = parseBaseUrl(options.url);
    if (!/^[\x21-\x7e]+$/.test(options.token)) {
      throw new Error(
        'The control-plane token is empty or holds spaces or control characters; expected one line of text',
      );
    }
    this.retries = options.retries ?? 5;
    this.minRetryDelayMs = options.minRetryDelayMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 15_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.maxPersistMs = options.maxPersistMs ?? 3_600_000;
  }

  /** Sends a request, retrying transient failures; resolves with a 2xx (or an allowed 404) response. */
  send(method: string, path: string, request: SendOptions & { call: CallOptions }): Promise<HttpAnswer> {
    return this.withRetries(`${method} ${path}`, request.call, (signal) =>
      this.attempt(method, path, { ...request, signal }),
    );
  }

  /** Runs `attempt` under the retry policy; exhausted transient failures become ControlPlaneUnreachableError. */
  async withRetries<T>(
    request: string,
    call: CallOptions,
    attempt: (signal: AbortSignal | undefined) => Promise<T>,
  ): Promise<T> {
    const budget = call.retries ?? this.retries;
    const { persist } = call;
    const persistUntil = Date.now() + this.maxPersistMs;
    const persisting = () => persist !== undefined && !persist.aborted && Date.now() < persistUntil;
    try {
      return await pRetry(() => attempt(call.signal), {
        retries: persist ? Infinity : budget,
        minTimeout: this.minRetryDelayMs,
        maxTimeout: this.maxRetryDelayMs,
        randomize: true,
        ...(call.signal ? { signal: call.signal } : {}),
        shouldRetry: ({ error, attemptNumber }) =>
          isTransient(error) && !call.signal?.aborted && (persisting() || attemptNumber <= budget),
        onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
          // Told before shouldRetry: a retry is said only where one follows.
          if (retriesLeft > 0 && isTransient(error) && (persisting() || attemptNumber <= budget))
            this.options.onRetry?.({ request, attempt: attemptNumber, error });
        },
      });
    } catch (error) {
      if (call.signal?.aborted || !isTransient(error)) throw error;
      const why = error instanceof TransientResponseError ? error.message : describeNetworkError(error);
      throw new ControlPlaneUnreachableError(
        request,
        `Could not reach the control plane at ${this.base.origin} (${request}): ${why}`,
        { cause: error },
      );
    }
  }

  /** One HTTP exchange: the status decides what is thrown. */
  async attempt(
    method: string,
    path: string,
    request: SendOptions & { signal: AbortSignal | undefined },
  ): Promise<HttpAnswer> {
    const headers: Record<string, string> = {
      ...request.headers,
      authorization: `Bearer ${this.options.token}`,
      accept: 'application/json',
      'user-agent': USER_AGENT,
      [PROTOCOL_HEADER.toLowerCase()]: String(PROTOCOL_VERSION),
    };
    let body: string | Uint8Array | Readable | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.body) {
      headers['content-type'] = 'application/octet-stream';
      headers['content-length'] = String(request.body.size);
      body = bodyOf(request.body.data);
    }
    if (request.lease) {
      headers['x-fluksio-lease'] = request.lease.lease;
      headers['x-fluksio-run'] = request.lease.runId;
    }
    // undici's request, not fetch: a third of fetch's time per exchange, and it follows no
    // redirect (one could carry the Authorization header elsewhere: refused below).
    const answer = await exchange(this.urlOf(path), {
      method,
      headers,
      body,
      signal: request.signal,
      timeoutMs: request.timeoutMs ?? this.requestTimeoutMs,
    });
    const older = olderProtocolError({ origin: this.base.origin, request: `${method} ${path}`, answer });
    if (older) throw older;
    if (isSuccess(answer.status)) return answer;
    if (answer.status === 404 && request.allowNotFound) {
      answer.discard();
      return answer;
    }
    if (answer.status === 307 && request.allowStoreRedirect && answer.header('location') !== null) {
      answer.discard();
      return answer;
    }
    if (answer.status >= 300 && answer.status < 400) throw redirectError(`${method} ${path}`, answer);
    throw await errorFor(`${method} ${path}`, answer);
  }

  /**
   * One exchange with a blob store at a presigned URL the control plane handed out: only
   * `request.headers` go along (never the token), no redirect is followed, and the URL
   * (its signature) appears in no message. 5xx, 408, 429 and 403 (a URL that expired
   * while a retry waited: the next attempt asks for a fresh one) are transient.
   */
  async storeAttempt(method: 'GET' | 'PUT', url: string, request: StoreRequest): Promise<HttpAnswer> {
    const answer = await exchange(new URL(url), {
      method,
      headers: request.body
        ? { ...request.headers, 'content-length': String(request.body.size) }
        : { ...request.headers },
      body: request.body ? bodyOf(request.body.data) : undefined,
      signal: request.signal,
      timeoutMs: request.timeoutMs,
    });
    if (isSuccess(answer.status) || (answer.status === 404 && request.allowNotFound)) return answer;
    const where = `${method} ${new URL(url).host}`;
    const text = await answer.text().catch(() => '');
    // S3's error document: <Code>…</Code><Message>…</Message>.
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    const sentence = [code, message].filter(Boolean).join(': ') || `HTTP ${answer.status}`;
    if (answer.status === 403 || answer.status === 408 || answer.status === 429 || answer.status >= 500)
      throw new TransientResponseError(`the blob store answered ${answer.status}: ${sentence}`);
    if (answer.status >= 300 && answer.status < 400)
      throw new ControlPlaneError(
        answer.status,
        where,
        `The blob store answered ${where} with a redirect (${answer.status}); presigned URLs are not followed elsewhere`,
      );
    throw new ControlPlaneError(
      answer.status,
      where,
      `The blob store answered ${answer.status} to ${where}: ${sentence}`,
    );
  }

  /**
   * A GET of bytes under `timeoutMs` (a blob's transfer limit), retried whole when
   * `consume` fails transiently. A control plane whose store hands out presigned URLs
   * answers 307: the bytes then come from the store, fetched without the token. Null for
   * an allowed 404.
   */
  download<T>(
    path: string,
    options: Pick<SendOptions, 'lease' | 'allowNotFound'>,
    consume: (body: Readable) => Promise<T>,
    call: CallOptions,
    timeoutMs: number,
  ): Promise<T | null> {
    return this.withRetries(`GET ${path}`, call, async (signal) => {
      let answer = await this.attempt('GET', path, {
        ...options,
        signal,
        timeoutMs,
        allowStoreRedirect: true,
      });
      const location = answer.status === 307 ? answer.header('location') : null;
      if (location !== null) {
        answer = await this.storeAttempt('GET', new URL(location, this.base).href, {
          allowNotFound: true,
          signal,
          timeoutMs,
        });
      }
      if (answer.status === 404) {
        answer.discard();
        return null;
      }
      return consume(answer.stream());
    });
  }

  /** `path` (absolute, with its query) under the base URL's own path. */
  private urlOf(path: string): URL {
    return new URL(`${this.base.pathname.replace(/\/+$/, '')}${path}`, this.base);
  }

  /** The response's JSON, validated with a protocol schema. */
  async parse<S extends z.ZodType>(answer: HttpAnswer, schema: S, request: string): Promise<z.infer<S>> {
    const text = await answer.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ControlPlaneError(
        0,
        request,
        `The control plane answered ${request} with a body that is not JSON`,
        undefined,
        {
          cause: error,
        },
      );
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`,
    );
    throw new ControlPlaneError(
      0,
      request,
      `The control plane's answer to ${request} does not match the protocol: ${issues.slice(0, 5).join('; ')}`,
    );
  }
}

function parseBaseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `The control plane URL "${redactUrl(url)}" is not a URL; expected e.g. https://fluksio.example.com`,
    );
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new Error(
      `The control plane URL "${redactUrl(url)}" is not http(s); expected e.g. https://fluksio.example.com`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new Error(
      'The control plane URL carries credentials; give only the address (the token travels in the Authorization header alone)',
    );
  }
  return parsed;
}
