/**
 * A repository name GitHub could hold: exactly `owner/name`, the owner of letters, digits
 * and hyphens (a GitHub login) and the name one segment. A repository elsewhere is named by
 * its host and path (`local/srv/model`, `scm/ml/model`, `git.example.com/model`): one with
 * more segments, a dot or an underscore in its owner is never a GitHub repository, and
 * GitHub must not be asked about it as if it were (it would answer for `local/srv`).
 */
const GITHUB_REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/;

/** Whether `repository` can name a repository on GitHub. */
export function isGitHubRepositoryName(repository: string): boolean {
  return GITHUB_REPOSITORY.test(repository);
}
