/**
 * The bots that push dependency updates to branches of a repository (Dependabot, Renovate),
 * whose pushes GitHub Actions also runs without the repository's secrets: what they push is
 * whatever a package registry served, which nobody with write access has vouched for.
 */
const DEPENDENCY_BOTS = new Set(['dependabot[bot]', 'renovate[bot]']);

/** Whether a login is a dependency-update bot's. */
export function isDependencyBot(login: string): boolean {
  return DEPENDENCY_BOTS.has(login.toLowerCase());
}
