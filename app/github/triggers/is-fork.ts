import type { PullRequest } from '../webhook-payloads.js';

/**
 * Whether a pull request comes from a fork (DESIGN §8): its head repository is another
 * repository than its base, or was deleted — then nobody can say whose code it is.
 */
export function isFork(pullRequest: Pick<PullRequest, 'head' | 'base'>): boolean {
  return pullRequest.head.repo === null || pullRequest.head.repo.id !== pullRequest.base.repo.id;
}
