/** What the double knows about a request when deciding whether a fault applies to it. */
export interface MatchableRequest {
  method: string;
  /** The concrete path, e.g. `/repos/acme/ml/check-runs`. */
  path: string;
  /** The route's template, e.g. `/repos/{owner}/{repo}/check-runs`. */
  route: string;
  operationId: string;
  body: unknown;
}

/**
 * Which requests a fault applies to: `'POST /repos/{owner}/{repo}/check-runs'` (a method and a
 * route template or concrete path; without the method, any method), an operation id such as
 * `'checks/create'`, or a predicate.
 */
export type RequestMatcher = string | ((request: MatchableRequest) => boolean);

/** A failure the double injects instead of (or after) answering a request. */
export interface InjectedFault {
  /** The status to answer with, without applying the request. */
  status?: number;
  /** Headers of that answer (`retry-after`, `x-ratelimit-remaining`, `x-ratelimit-reset`). */
  headers?: Record<string, string>;
  /** Its JSON body. @defaultValue GitHub's message for the status */
  body?: unknown;
  /**
   * Apply the request, then destroy the socket without answering: the response to a create
   * is lost, and a retry must find what the first attempt made.
   */
  dropAfterApplying?: boolean;
  /**
   * Apply the request, then hold its answer until this settles: a request in flight while
   * the test changes something else (a slow network, a sync racing a reset).
   */
  answerAfter?: Promise<unknown>;
  /** How many matching requests fail. @defaultValue 1 */
  times?: number;
}

/** The message GitHub sends with a secondary rate limit. */
export const SECONDARY_RATE_LIMIT_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. ' +
  'If you reach out to GitHub Support for help, please include the request ID.';

/** A secondary rate limit: 403 with `retry-after` and GitHub's message. */
export function secondaryRateLimit(retryAfterSeconds = 1): InjectedFault {
  return {
    status: 403,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: {
      message: SECONDARY_RATE_LIMIT_MESSAGE,
      documentation_url:
        'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
    },
  };
}

/** An exhausted primary rate limit: 403 with `x-ratelimit-remaining: 0` until `resetAt`. */
export function primaryRateLimit(resetAt: Date): InjectedFault {
  return {
    status: 403,
    headers: {
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-used': '5000',
      'x-ratelimit-reset': String(Math.ceil(resetAt.getTime() / 1000)),
    },
  };
}

/** GitHub's body for an injected status when the fault gives none. */
export function defaultFaultBody(fault: InjectedFault): unknown {
  const headers = fault.headers ?? {};
  if (fault.status === 403 && headers['x-ratelimit-remaining'] === '0') {
    return {
      message: 'API rate limit exceeded for installation.',
      documentation_url:
        'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit',
    };
  }
  if (fault.status === 403 && headers['retry-after'] !== undefined) return secondaryRateLimit().body;
  return { message: fault.status !== undefined && fault.status >= 500 ? 'Server Error' : 'Injected failure' };
}

/** Whether `matcher` selects `request`. */
export function matchesRequest(matcher: RequestMatcher, request: MatchableRequest): boolean {
  if (typeof matcher === 'function') return matcher(request);
  if (matcher === request.operationId) return true;
  const [first = '', second] = matcher.trim().split(/\s+/);
  const [method, path] = second === undefined ? [undefined, first] : [first.toUpperCase(), second];
  if (method !== undefined && method !== request.method) return false;
  return path === request.route || path === request.path;
}

/** Faults armed by `failNext`, each used up by the matching requests it fails. */
export class FaultQueue {
  private readonly armed: Array<{ matcher: RequestMatcher; fault: InjectedFault; remaining: number }> = [];

  arm(matcher: RequestMatcher, fault: InjectedFault): void {
    if (fault.status === undefined && !fault.dropAfterApplying && fault.answerAfter === undefined) {
      throw new Error('failNext needs a status to answer with, dropAfterApplying: true or answerAfter');
    }
    const times = fault.times ?? 1;
    if (!Number.isInteger(times) || times < 1) {
      throw new Error(`failNext times must be a positive integer, got ${times}`);
    }
    this.armed.push({ matcher, fault, remaining: times });
  }

  /** The first armed fault matching `request`, used up once more; faults apply in the order armed. */
  take(request: MatchableRequest): InjectedFault | undefined {
    const found = this.armed.find(({ matcher }) => matchesRequest(matcher, request));
    if (!found) return undefined;
    found.remaining -= 1;
    if (found.remaining === 0) this.armed.splice(this.armed.indexOf(found), 1);
    return found.fault;
  }

  pending(): number {
    return this.armed.reduce((sum, { remaining }) => sum + remaining, 0);
  }
}
