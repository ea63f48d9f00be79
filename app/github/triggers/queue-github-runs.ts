import { checkRunName, sweptParams } from '../../../present/github/check-run-name.js';
import type { Pipeline } from '../../../schemas/pipeline.js';
import type { Params } from '../../../core/params/resolve-params.js';
import type { Run, RunTrigger } from '../../../schemas/tables/runs.js';
import { recordGroupComment } from '../../../store/outbox/record-group-comment.js';
import type { GitHubWork } from '../github-work.js';
import { githubRunDefinition } from '../github-run-definition.js';
import { queueCheckedRuns } from './queue-checked-runs.js';
import type { RepositoryRef } from '../repository-ref.js';

/** Runs to queue for one delivery: one commit, the grid of parameter sets, and how they came. */
export interface GitHubRunRequest {
  deliveryId: string;
  installationId: number;
  repository: RepositoryRef;
  /** The exact SHA, fixed now: later pushes change nothing for these runs (DESIGN §5). */
  commit: string;
  /** The file the pipeline was read from at that commit (`fluksio.yml` or `dvc.yaml`). */
  pipelinePath: string;
  pipeline: Pipeline;
  /** One parameter set per run; more than one is a sweep (a group). */
  grid: Params[];
  /** The swept keys, which name each member's check run. */
  swept: string[];
  noCache: boolean;
  trigger: RunTrigger;
  /** Made by a push or pull request event: a new push to the pull request cancels it. */
  automatic: boolean;
  /** The pull request, when there is one; a fork's runs fetch its `refs/pull/<n>/head`. */
  pullRequest: { number: number; baseRef: string; fork: boolean } | null;
  /** The pushed branch, or the pull request's head branch (the run lists filter by it). */
  branch: string | null;
  /** Who asked (the commenter, the pusher). */
  requestedBy: string;
}

/**
 * Queues the runs of one delivery (DESIGN §8), each with its check run's row, under the
 * trigger key `delivery:<id>:<grid index>`: a redelivery, or a worker retried after dying
 * anywhere in here, finds the runs already made and makes none again (queueCheckedRuns).
 * A sweep is one group whose pull-request comment is recorded with it and handed to the
 * outbox each time. Returns the runs in grid order.
 */
export async function queueGitHubRuns(work: GitHubWork, request: GitHubRunRequest): Promise<Run[]> {
  const { pipeline, pullRequest, repository } = request;
  const sweep = request.grid.length > 1;
  // The delivery id is the group's id: a retry must put its runs in the same group.
  const groupId = sweep ? `group-${request.deliveryId}` : null;
  if (groupId !== null && pullRequest !== null) {
    await recordGroupComment({
      db: work.db,
      group: {
        groupId,
        installationId: request.installationId,
        repository: repository.fullName,
        prNumber: pullRequest.number,
      },
    });
  }
  const queued = await queueCheckedRuns(work, {
    installationId: request.installationId,
    logContext: { deliveryId: request.deliveryId, repository: repository.fullName, commit: request.commit },
    runs: request.grid.map((params, index) => ({
      ...githubRunDefinition({
        repository,
        pipelinePath: request.pipelinePath,
        pipeline,
        commit: request.commit,
        params,
        pullRequest,
        branch: request.branch,
      }),
      groupId,
      groupIndex: sweep ? index : null,
      noCache: request.noCache,
      triggerKey: `delivery:${request.deliveryId}:${index}`,
      submittedBy: request.requestedBy,
      trigger: request.trigger,
      automatic: request.automatic,
      checkName: checkRunName(work.github.checkName, sweep ? sweptParams(params, request.swept) : null),
    })),
  });
  if (groupId !== null && pullRequest !== null) await work.notifications.notifyGroup(groupId);
  return queued;
}
