import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';
import { PullRequest, readPayload } from '../webhook-payloads.js';

/**
 * A pull request as it is now (`GET /pulls/{n}`): a command runs the head read here, not
 * the one in the event, which may be minutes old (DESIGN §5).
 */
export async function readPullRequest(
  api: GitHubApi,
  repository: RepositoryRef,
  prNumber: number,
): Promise<PullRequest> {
  const { data } = await api.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
    owner: repository.owner,
    repo: repository.name,
    pull_number: prNumber,
  });
  return readPayload(PullRequest, 'pull request', data);
}
