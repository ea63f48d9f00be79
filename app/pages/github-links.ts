import type { Run } from '../../schemas/tables/runs.js';
import { GITHUB_CLONE_URL_PREFIX } from '../clone-url-policy.js';
import { isGitHubRepositoryName } from './github-repository-name.js';

/** What decides whether a run's code is on GitHub. */
export type RunOrigin = Pick<Run, 'repository' | 'cloneUrl' | 'installationId'>;

/**
 * Whether a run's code is the GitHub repository its name names: GitHub's webhook made it
 * (an installation), or it is fetched from github.com. A run fetched from elsewhere is
 * not, even where its name (`scm/ml`, `local/srv`) is a GitHub owner/name: github.com
 * holds somebody else's repository of that name.
 */
export function isGitHubRun(run: RunOrigin): boolean {
  if (!isGitHubRepositoryName(run.repository)) return false;
  return run.installationId !== null || (run.cloneUrl?.startsWith(GITHUB_CLONE_URL_PREFIX) ?? false);
}

/** `https://github.com/OWNER/REPO/blob/SHA/path#Lnn`, or null for a run whose code is not on GitHub. */
export function githubBlobUrl(run: RunOrigin, commit: string, path: string, line: number): string | null {
  if (!isGitHubRun(run)) return null;
  const encodedPath = path.split('/').map(encodeURIComponent).join('/');
  return `https://github.com/${run.repository}/blob/${commit}/${encodedPath}#L${line}`;
}

/** `https://github.com/OWNER/REPO/commit/SHA`, or null for a run whose code is not on GitHub. */
export function githubCommitUrl(run: RunOrigin, commit: string): string | null {
  if (!isGitHubRun(run)) return null;
  return `https://github.com/${run.repository}/commit/${commit}`;
}
