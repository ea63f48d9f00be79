import { rateLimitRetryAt } from './outbox/outbox-rate-limit-error.js';

/**
 * Whether GitHub's refusal will not change by asking again: what was asked for is gone or
 * out of the App's reach (404: uninstalled, the repository removed from the App), invalid
 * or renamed (422), or forbidden without being a rate limit (403: a suspended
 * installation). A rate limit (as rateLimitRetryAt reads one), a 5xx or a network failure
 * is worth another try. Returns GitHub's status and message for such a refusal, or null.
 */
export function permanentGitHubRefusal(error: unknown): { status: number; message: string } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, message } = error as { status?: unknown; message?: unknown };
  if (status !== 404 && status !== 422 && status !== 403) return null;
  if (rateLimitRetryAt(error, Date.now()) !== null) return null;
  // Octokit's messages end with a documentation link: the sentence before it is GitHub's.
  const text = typeof message === 'string' ? message.replace(/ - https:\/\/docs\.github\.com\S*$/, '') : '';
  return { status, message: text.slice(0, 300) };
}
