/**
 * Whether GitHub's refusal to mint an installation token will not change by asking again:
 * the App was uninstalled or lost the repository (404), the repository was renamed or
 * deleted (422), or the installation is suspended (403 that is no rate limit). A rate
 * limit, a 5xx or a network failure is worth another try. Returns GitHub's status and
 * message for a refusal, or null.
 */
export function permanentTokenRefusal(error: unknown): { status: number; message: string } | null {
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
