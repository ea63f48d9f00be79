/** Statuses whose response has no body (a Response made with one throws). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A GitHub request that did not finish within its deadline. Its message names the request
 * by method and path only — never the query, headers or body, where tokens travel.
 */
export class GitHubTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super(`GitHub did not answer ${method} ${path}: it timed out after ${timeoutMs / 1000} s`);
    this.name = 'GitHubTimeoutError';
  }
}

/**
 * A `fetch` for Octokit (`request: { fetch }`) that gives every GitHub request at most
 * `timeoutMs`, its answer's body included (read here, so a body that stops arriving
 * fails too, instead of Octokit's parser taking it for an empty answer): a request GitHub
 * holds open fails with a GitHubTimeoutError, and the delivery or outbox job making it is
 * retried rather than hung. A signal the caller passes still aborts it as before.
 */
export function fetchWithDeadline(timeoutMs: number, inner: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const timedOut = (error: unknown): unknown => {
      if (!deadline.aborted) return error;
      const { method, path } = describe(input, init);
      return Object.assign(new GitHubTimeoutError(method, path, timeoutMs), { cause: error });
    };
    try {
      const response = await inner(input, { ...init, signal });
      if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
      const body = await response.arrayBuffer();
      const buffered = new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
      // Octokit reports the URL answered (after redirects).
      Object.defineProperty(buffered, 'url', { value: response.url });
      return buffered;
    } catch (error) {
      throw timedOut(error);
    }
  };
}

/** The method and path of a request, for an error: the query (which may hold a secret) left out. */
function describe(
  input: string | URL | Request,
  init: RequestInit | undefined,
): { method: string; path: string } {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  try {
    return { method, path: new URL(url).pathname };
  } catch {
    return { method, path: '(an unreadable URL)' };
  }
}
