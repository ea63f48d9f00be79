/** A repository name that lives on GitHub (`owner/name`); `local` and other stores have none. */
const GITHUB_REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/;

/** `https://github.com/OWNER/REPO/blob/SHA/path#Lnn`, or null for a repository not on GitHub. */
export function githubBlobUrl(repository: string, commit: string, path: string, line: number): string | null {
  if (!GITHUB_REPOSITORY.test(repository)) return null;
  const encodedPath = path.split('/').map(encodeURIComponent).join('/');
  return `https://github.com/${repository}/blob/${commit}/${encodedPath}#L${line}`;
}

/** `https://github.com/OWNER/REPO/commit/SHA`, or null for a repository not on GitHub. */
export function githubCommitUrl(repository: string, commit: string): string | null {
  if (!GITHUB_REPOSITORY.test(repository)) return null;
  return `https://github.com/${repository}/commit/${commit}`;
}
