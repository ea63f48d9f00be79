/**
 * The HTTP status of a failed GitHub API call (Octokit's RequestError carries `status`),
 * or null for any other error (a network failure).
 */
export function githubStatusOf(error: unknown): number | null {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}
