import type { Pipeline } from '../../schemas/pipeline.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { NewRun, Run } from '../../schemas/tables/runs.js';
import type { RepositoryRef } from './repository-ref.js';

/**
 * What a run reporting to GitHub executes, and where and how it may: the commit and params,
 * the pipeline's settings taken when it was queued (labels, retries, time limit, metric
 * goals), and the pull request it belongs to, which decides its trust domain and the ref a
 * fork's runner fetches. A re-run executes the same definition again; who asked and why
 * (trigger key, trigger, sender, check name, cache use) belong to each run.
 */
export type GitHubRunDefinition = { commit: string } & Required<
  Pick<
    NewRun,
    | 'repository'
    | 'pipelinePath'
    | 'params'
    | 'labels'
    | 'cloneUrl'
    | 'retries'
    | 'timeoutMs'
    | 'metricGoals'
    | 'trustDomain'
    | 'fork'
    | 'fetchRef'
    | 'prNumber'
    | 'baseRef'
    | 'branch'
  >
>;

/**
 * The definition of a new run of `commit` with `params`, as the pipeline read at that
 * commit from `pipelinePath` says (DESIGN §8); the runner loads the same file. A fork's
 * pull request runs in the trust domain `pr:<n>`; anything else is trusted. A pull
 * request's run fetches `refs/pull/<n>/head`, which a runner accepts for a trusted run only
 * from here (a same-repository pull request whose branch may be deleted, squash-merged,
 * before the run is claimed): a submitted run names no ref, and its commit must be a branch's.
 */
export function githubRunDefinition({
  repository,
  pipelinePath,
  pipeline,
  commit,
  params,
  pullRequest,
  branch,
}: {
  repository: RepositoryRef;
  /** The file the pipeline was read from (`fluksio.yml`, or a DVC project's `dvc.yaml`). */
  pipelinePath: string;
  pipeline: Pipeline;
  commit: string;
  params: Params;
  /** The pushed branch, or the pull request's head branch. */
  branch: string | null;
  pullRequest: { number: number; baseRef: string; fork: boolean } | null;
}): GitHubRunDefinition {
  const fork = pullRequest?.fork ?? false;
  return {
    repository: repository.fullName,
    pipelinePath,
    commit,
    params,
    labels: [...new Set(pipeline['runs-on'])].sort(),
    cloneUrl: repository.cloneUrl,
    retries: pipeline.retries,
    timeoutMs: pipeline.timeout,
    metricGoals: pipeline.metrics,
    trustDomain: fork && pullRequest ? `pr:${pullRequest.number}` : 'trusted',
    fork,
    fetchRef: pullRequest ? `refs/pull/${pullRequest.number}/head` : null,
    prNumber: pullRequest?.number ?? null,
    baseRef: pullRequest?.baseRef ?? null,
    branch,
  };
}

/** The definition an existing run was made with: what its re-run executes again. */
export function definitionOf(run: Run & { commit: string }): GitHubRunDefinition {
  return {
    repository: run.repository,
    pipelinePath: run.pipelinePath,
    commit: run.commit,
    params: run.params,
    labels: run.labels,
    cloneUrl: run.cloneUrl,
    retries: run.retries,
    timeoutMs: run.timeoutMs,
    metricGoals: run.metricGoals,
    trustDomain: run.trustDomain,
    fork: run.fork,
    fetchRef: run.fetchRef,
    prNumber: run.prNumber,
    baseRef: run.baseRef,
    branch: run.branch,
  };
}
