import type { Octokit } from '@octokit/rest';

/**
 * What the outbox needs of an installation's client: `request`, with routes typed by
 * @octokit/types. An @octokit/rest Octokit and Probot's `context.octokit` both fit. The
 * outbox retries by itself, so the client's own retry and throttling plugins may be off.
 */
export type OutboxOctokit = Pick<Octokit, 'request'>;

/** `owner/name` as the `owner` and `repo` parameters of a REST route. */
export function repositoryParams(repository: string): { owner: string; repo: string } {
  const slash = repository.indexOf('/');
  if (slash <= 0 || slash === repository.length - 1)
    throw new Error(`Repository ${JSON.stringify(repository)} is not owner/name`);
  return { owner: repository.slice(0, slash), repo: repository.slice(slash + 1) };
}
