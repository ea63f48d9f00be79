import type { Pipeline } from '../../../schemas/pipeline.js';
import type { Problem } from '../../../core/problem.js';
import { validatePipeline } from '../../../core/pipeline/validate-pipeline.js';
import { githubStatusOf } from '../github-status-of.js';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';

/** Where the GitHub App reads a repository's pipeline (DESIGN §3). */
export const PIPELINE_PATH = 'fluksio.yml';

/** A commit's pipeline: absent, valid, or broken with every problem. */
export type PipelineAtCommit =
  { state: 'absent' } | { state: 'valid'; pipeline: Pipeline } | { state: 'broken'; problems: Problem[] };

/**
 * Reads `fluksio.yml` at exactly `commit` through the contents API and validates it
 * (DESIGN §8), before anything is queued. Deps are not checked for existence here (the
 * runner checks them in its checkout, where the tree is at hand). A repository without
 * the file is `absent`; any other API failure is thrown, for the delivery to be retried.
 */
export async function readPipelineAt(
  api: GitHubApi,
  repository: RepositoryRef,
  commit: string,
): Promise<PipelineAtCommit> {
  let data: unknown;
  try {
    ({ data } = await api.request('GET /repos/{owner}/{repo}/contents/{path}', {
      owner: repository.owner,
      repo: repository.name,
      path: PIPELINE_PATH,
      ref: commit,
    }));
  } catch (error) {
    if (githubStatusOf(error) === 404) return { state: 'absent' };
    throw error;
  }
  const file = data as { type?: string; encoding?: string; content?: string } | unknown[];
  if (Array.isArray(file) || file.type !== 'file') {
    return broken(`${PIPELINE_PATH} is not a file at ${commit}`);
  }
  if (file.encoding !== 'base64' || typeof file.content !== 'string') {
    // The contents API leaves files over 1 MB unencoded; no pipeline is that large.
    return broken(`${PIPELINE_PATH} is too large to be a pipeline file (over 1 MB)`);
  }
  const text = Buffer.from(file.content, 'base64').toString('utf8');
  const { pipeline, problems } = validatePipeline(text, { pipelineDir: '' });
  return pipeline ? { state: 'valid', pipeline } : { state: 'broken', problems };
}

function broken(message: string): PipelineAtCommit {
  return { state: 'broken', problems: [{ path: '', message }] };
}
