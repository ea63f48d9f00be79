import { isGitHubRepositoryName } from './github-repository-name.js';

/** `https://github.com/OWNER/REPO/blob/SHA/path#Lnn`, or null for a repository not on GitHub. */
export function githubBlobUrl(repository: string, commit: string, path: string, line: number): string | null {
  if (!isGitHubRepositoryName(repository)) return null;
  const encodedPath = path.split('/').map(encodeURIComponent).join('/');
  return `https://github.com/${repository}/blob/${commit}/${encodedPath}#L${line}`;
}

/** `https://github.com/OWNER/REPO/commit/SHA`, or null for a repository not on GitHub. */
export function githubCommitUrl(repository: string, commit: string): string | null {
  if (!isGitHubRepositoryName(repository)) return null;
  return `https://github.com/${repository}/commit/${commit}`;
}
