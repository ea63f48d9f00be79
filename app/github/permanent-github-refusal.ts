/**
 * Whether GitHub's refusal will not change by asking again: what was asked for is gone or
 * out of the App's reach (404: uninstalled, the repository removed from the App), invalid
 * or renamed (422), or forbidden without being a rate limit (403: a suspended
 * installation). A rate limit, a 5xx or a network failure is worth another try. Returns
 * GitHub's status and message for such a refusal, or null.
 */
export function permanentGitHubRefusal(error: unknown): { status: number; message: string } | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, message, response } = error as {
    status?: unknown;
    message?: unknown;
    response?: { headers?: Record<string, string | number | undefined> };
  };
  if (typeof status !== 'number') return null;
  const headers = response?.headers ?? {};
  const rateLimited =
    headers['retry-after'] !== undefined || String(headers['x-ratelimit-remaining']) === '0';
  const permanent = status === 404 || status === 422 || (status === 403 && !rateLimited);
  if (!permanent) return null;
  // Octokit's messages end with a documentation link: the sentence before it is GitHub's.
  const text = typeof message === 'string' ? message.replace(/ - https:\/\/docs\.github\.com\S*$/, '') : '';
  return { status, message: text.slice(0, 300) };
}
