import type { z } from 'zod';
import { ApiError } from '../../schemas/protocol/api-error.js';

/** The control plane refused a request; `status` is the HTTP status, the message its sentence. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/** Attempts at a request the control plane did not answer (connection refused, 5xx). */
const ATTEMPTS = 4;

/**
 * The submitter's side of the control plane's API: JSON in and out, every reply
 * validated, errors as the server's own sentence. A request that never got an answer is
 * tried again a few times; that is safe because submitting carries an Idempotency-Key.
 */
export class ApiClient {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async request<T>(
    method: string,
    path: string,
    schema: z.ZodType<T>,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const response = await this.send(method, path, options);
    const text = await response.text();
    if (!response.ok) throw new ApiRequestError(response.status, errorMessage(response.status, text));
    const parsed = schema.safeParse(text ? JSON.parse(text) : null);
    if (!parsed.success) {
      throw new Error(
        `The control plane answered ${method} ${path} with something unexpected: ${parsed.error.message}`,
      );
    }
    return parsed.data;
  }

  /** The raw response of a GET, for downloads; errors as ApiRequestError. */
  async download(path: string): Promise<Response> {
    const response = await this.send('GET', path, {});
    if (!response.ok)
      throw new ApiRequestError(response.status, errorMessage(response.status, await response.text()));
    return response;
  }

  private async send(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        const response = await fetch(`${this.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...options.headers,
          },
          ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        });
        if (response.status < 500 || attempt === ATTEMPTS) return response;
        lastError = new ApiRequestError(
          response.status,
          errorMessage(response.status, await response.text()),
        );
      } catch (error) {
        lastError = error;
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
    }
    const why = lastError instanceof Error ? lastError.message : String(lastError);
    throw new Error(`The control plane at ${this.url} did not answer ${method} ${path}: ${why}`, {
      cause: lastError,
    });
  }
}

function errorMessage(status: number, text: string): string {
  try {
    const parsed = ApiError.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data.error;
  } catch {
    // Not JSON: fall through to the status line.
  }
  return `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
}
