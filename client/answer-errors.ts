import { ApiError } from '../schemas/protocol/api-error.js';
import {
  ControlPlaneError,
  ForbiddenError,
  NotFoundError,
  ProtocolMismatchError,
  StaleLeaseError,
  UnauthorizedError,
} from './control-plane-errors.js';
import type { HttpAnswer } from './http-exchange.js';
import { redactUrl } from './redact-url.js';

// How an answer or a failed exchange with the control plane reads: an error of the kind a
// caller acts on (401, 404, a stale lease…), or one worth another try (5xx, 408, 429, a
// connection refused or reset, a timeout).

/** A 5xx, 408 or 429 (`it answered 503: <the sentence>`): worth another try. */
export class TransientResponseError extends Error {}

/** Whether `error` is worth another try: a transient answer, a timeout, a connection that failed. */
export function isTransient(error: unknown): boolean {
  if (error instanceof TransientResponseError) return true;
  return (
    error instanceof Error &&
    (error.name === 'TimeoutError' || isConnectionError(error) || isConnectionError(error.cause))
  );
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_\w+)$/.test(
      code,
    )
  );
}

/** A failed exchange in a few words: the system's code and message, or that it timed out. */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return 'the request timed out';
  const failure = (isConnectionError(error) ? error : error.cause) as
    { code?: string; message?: string } | undefined;
  return failure?.code ? `${failure.code}${failure.message ? ` (${failure.message})` : ''}` : error.message;
}

/** The error an answer of 4xx or 5xx stands for, with the control plane's own sentence. */
export async function errorFor(request: string, response: HttpAnswer): Promise<Error> {
  const text = await response.text().catch(() => '');
  let sentence = text.slice(0, 500) || `HTTP ${response.status}`;
  let field: string | undefined;
  try {
    const parsed = ApiError.safeParse(JSON.parse(text));
    if (parsed.success) {
      sentence = parsed.data.error;
      field = parsed.data.field;
    }
  } catch {
    // Not JSON (a proxy's error page): the text itself is the best sentence there is.
  }
  // 408: the control plane gave up waiting for the request's body, which a retry sends again.
  if (response.status === 408 || response.status === 429 || response.status >= 500)
    return new TransientResponseError(`it answered ${response.status}: ${sentence}`);
  const message = `The control plane answered ${response.status} to ${request}: ${sentence}`;
  const ErrorClass =
    response.status === 401
      ? UnauthorizedError
      : response.status === 403
        ? ForbiddenError
        : response.status === 404
          ? NotFoundError
          : response.status === 409
            ? StaleLeaseError
            : response.status === 426
              ? ProtocolMismatchError
              : ControlPlaneError;
  return new ErrorClass(response.status, request, message, field);
}

/** A 3xx: not followed, since the token would go along; the message names where it pointed. */
export function redirectError(request: string, response: HttpAnswer): ControlPlaneError {
  response.discard();
  const location = response.header('location');
  const where = location ? ` to ${redactUrl(location)}` : '';
  return new ControlPlaneError(
    response.status,
    request,
    `The control plane answered ${request} with a redirect${where} (${response.status}); fluksio follows none, as the token would go along: give the URL it redirects to`,
  );
}
