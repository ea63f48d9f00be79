import { z } from 'zod';
import { githubStatusOf } from '../github-status-of.js';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';

/** A file of a repository at one commit: not there, its text, or there but not readable as text. */
export type FileAtCommit =
  { state: 'absent' } | { state: 'file'; text: string } | { state: 'unreadable'; message: string };

/** What the contents API answers for a path: a directory's listing, or one entry. */
const ContentsReply = z.union([
  z.array(z.unknown()),
  z.looseObject({ type: z.string(), encoding: z.string().optional(), content: z.string().optional() }),
]);

/**
 * Reads `path` at exactly `commit` through the contents API, never from a checkout (the
 * control plane has none). A path GitHub does not have (404) is `absent`; a directory, a
 * symlink or submodule, or a file over 1 MB (which the API leaves unencoded; no pipeline,
 * params or vars file is that large) is `unreadable`, saying which. Any other failure is
 * thrown, for the delivery to be retried.
 */
export async function readFileAt(
  api: GitHubApi,
  repository: RepositoryRef,
  commit: string,
  path: string,
): Promise<FileAtCommit> {
  let data: unknown;
  try {
    ({ data } = await api.request('GET /repos/{owner}/{repo}/contents/{path}', {
      owner: repository.owner,
      repo: repository.name,
      path,
      ref: commit,
    }));
  } catch (error) {
    if (githubStatusOf(error) === 404) return { state: 'absent' };
    throw error;
  }
  const reply = ContentsReply.safeParse(data);
  if (!reply.success) {
    throw new Error(`GitHub's contents API answered ${path} at ${commit} with an unexpected shape`, {
      cause: reply.error,
    });
  }
  const entry = reply.data;
  if (Array.isArray(entry) || entry.type !== 'file') {
    return { state: 'unreadable', message: `${path} is not a file at ${commit}` };
  }
  if (entry.encoding !== 'base64' || entry.content === undefined) {
    return { state: 'unreadable', message: `${path} is too large to read (over 1 MB)` };
  }
  return { state: 'file', text: Buffer.from(entry.content, 'base64').toString('utf8') };
}
