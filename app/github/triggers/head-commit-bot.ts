import { z } from 'zod';
import { githubStatusOf } from '../github-status-of.js';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';
import { Account, isBotAccount, readPayload } from '../webhook-payloads.js';

/** The first entry of `GET /commits?sha=<head>`: the head itself, with the accounts GitHub links it to. */
const CommitsReply = z.array(
  z.object({
    sha: z.string(),
    author: Account.nullable().optional(),
    committer: Account.nullable().optional(),
  }),
);

/**
 * The bot that made a pull request's head commit (its author or committer, as GitHub links
 * them to accounts), asked now; null for a person's commit. A `/fluksio run` may be handled
 * before the bot's push event is, or on a pipeline without `on.pull_request` that holds
 * nothing for approval: the commit itself says whose it is. A head GitHub does not find
 * (404, 409, 422: the pull request moved on) is no bot's; the run's checks catch a moved head.
 */
export async function headCommitBot(
  api: GitHubApi,
  repository: RepositoryRef,
  head: string,
): Promise<string | null> {
  let data: unknown;
  try {
    ({ data } = await api.request('GET /repos/{owner}/{repo}/commits', {
      owner: repository.owner,
      repo: repository.name,
      sha: head,
      per_page: 1,
    }));
  } catch (error) {
    const status = githubStatusOf(error);
    if (status === 404 || status === 409 || status === 422) return null;
    throw error;
  }
  const [commit] = readPayload(CommitsReply, 'commits', data);
  if (!commit || commit.sha !== head) return null;
  const bot = [commit.author, commit.committer].find((account) => account && isBotAccount(account));
  return bot?.login ?? null;
}
