/** GitHub asks for at least a minute's pause after a secondary rate limit that names no time. */
const SECONDARY_RATE_LIMIT_PAUSE_MS = 60_000;
/** A reset time already past (clock skew) still waits this long, so a limit is never hammered. */
const MIN_PAUSE_MS = 1_000;

/**
 * GitHub refused a request of an installation for a rate limit (or the outbox is holding
 * the installation's requests back until one ends): nothing is sent for it before
 * `retryAt` (epoch milliseconds).
 */
export class OutboxRateLimitError extends Error {
  constructor(
    readonly installationId: number,
    readonly retryAt: number,
    options?: ErrorOptions,
  ) {
    super(
      `GitHub rate limit for installation ${installationId}: waiting until ${new Date(retryAt).toISOString()}`,
      options,
    );
    this.name = 'OutboxRateLimitError';
  }
}

/**
 * When a failed request may be tried again, for GitHub's rate limits (REST "Rate limits"
 * and "secondary rate limits"): a 403 or 429 with `retry-after` (seconds) waits that
 * long; one with `x-ratelimit-remaining: 0` waits until `x-ratelimit-reset` (epoch
 * seconds); a 429 or a secondary-rate-limit message without either waits a minute. Null
 * for every other error, a 403 for missing permissions included (GitHub sends the
 * `x-ratelimit-*` headers on every response, so they alone say nothing).
 */
export function rateLimitRetryAt(error: unknown, now: number): number | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, message, response } = error as {
    status?: unknown;
    message?: unknown;
    response?: { headers?: Record<string, unknown>; data?: unknown };
  };
  if (status !== 403 && status !== 429) return null;
  const headers = response?.headers ?? {};
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    const at = Number.isFinite(seconds) ? now + seconds * 1000 : Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(at, now + MIN_PAUSE_MS);
  }
  const reset = Number(header(headers, 'x-ratelimit-reset'));
  const said = `${typeof message === 'string' ? message : ''} ${JSON.stringify(response?.data ?? '')}`;
  const limited = status === 429 || /rate limit/i.test(said);
  if ((header(headers, 'x-ratelimit-remaining') === '0' || limited) && Number.isFinite(reset) && reset > 0)
    return Math.max(reset * 1000, now + MIN_PAUSE_MS);
  return limited ? now + SECONDARY_RATE_LIMIT_PAUSE_MS : null;
}

function header(headers: Record<string, unknown>, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
}
