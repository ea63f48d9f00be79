import { githubStatusOf } from '../github-status-of.js';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';

/** Roles that may run code on the runners: write or more (DESIGN §8). */
const WRITERS = new Set(['admin', 'maintain', 'write']);

/**
 * Whether `login` has write permission or more on the repository, asked from the API
 * every time (DESIGN §8): a command and a re-run button are only as good as the permission
 * of whoever pressed it, now. A user who is no collaborator at all is answered 404.
 */
export async function mayWrite(api: GitHubApi, repository: RepositoryRef, login: string): Promise<boolean> {
  try {
    const { data } = await api.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
      owner: repository.owner,
      repo: repository.name,
      username: login,
    });
    // `permission` folds maintain into write; `role_name` names it (or a custom role).
    return WRITERS.has(data.permission) || WRITERS.has(data.role_name);
  } catch (error) {
    if (githubStatusOf(error) === 404) return false;
    throw error;
  }
}
