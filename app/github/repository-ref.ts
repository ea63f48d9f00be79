import type { WebhookRepository } from './webhook-payloads.js';

/** A repository as the GitHub API addresses it, and how runners clone it. */
export interface RepositoryRef {
  owner: string;
  name: string;
  /** `owner/name`: the runs' `repository`. */
  fullName: string;
  cloneUrl: string;
}

/**
 * The repository a payload is about. The clone URL is the payload's own (`https://github.com/
 * <owner>/<name>.git`, or the enterprise host's on GitHub Enterprise), else github.com's.
 */
export function repositoryRef(repository: WebhookRepository): RepositoryRef {
  return {
    owner: repository.owner.login,
    name: repository.name,
    fullName: repository.full_name,
    cloneUrl: repository.clone_url ?? `https://github.com/${repository.full_name}.git`,
  };
}
