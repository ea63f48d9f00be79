import type { Pipeline } from '../schemas/pipeline.js';
import { BranchName } from '../schemas/protocol/branch-name.js';
import type { SubmitRunRequest } from '../schemas/protocol/submit-run.js';
import type { Params } from '../core/params/resolve-params.js';
import type { OriginRepository } from './origin-repository.js';

/** What one submitted run is: a grid point of a pipeline at a pushed commit. */
export interface SubmittedRun {
  origin: OriginRepository;
  commit: string;
  pipelinePath: string;
  /** The pipeline at that commit: its runner labels, retries and time limit go along. */
  pipeline: Pick<Pipeline, 'runs-on' | 'retries' | 'timeout'>;
  params: Params;
  noCache: boolean;
  /** The sweep this run is one point of, and its place in the grid; null for a single run. */
  group: { id: string; index: number } | null;
  /** The branch the commit is of, for the run lists' filter; null when unknown (a detached HEAD). */
  branch: string | null;
}

/** The `POST /api/v1/runs` body for a run, as `fluksio submit` and the action's submit mode send it. */
export function submitRunRequest(run: SubmittedRun): SubmitRunRequest {
  return {
    repository: run.origin.repository,
    cloneUrl: run.origin.cloneUrl,
    commit: run.commit,
    pipelinePath: run.pipelinePath,
    params: run.params,
    labels: run.pipeline['runs-on'],
    noCache: run.noCache,
    retries: run.pipeline.retries,
    timeoutMs: run.pipeline.timeout,
    ...(run.group ? { group: run.group } : {}),
    // A name git would refuse (which no checkout has) lists the run under no branch rather than failing it.
    ...(run.branch !== null && BranchName.safeParse(run.branch).success ? { branch: run.branch } : {}),
  };
}
