import type { Run } from '../../schemas/tables/runs.js';
import { definitionOf } from './github-run-definition.js';
import type { GitHubWork } from './github-work.js';
import { mayWrite } from './may-write.js';
import { queueCheckedRuns } from './queue-checked-runs.js';
import type { RepositoryRef } from './repository-ref.js';

/**
 * The re-run buttons and "Re-run all checks" (`check_run.rerequested`,
 * `check_run.requested_action` `rerun`/`rerun-no-cache`, `check_suite.rerequested`;
 * DESIGN §8): each run is made again — same commit, params, pipeline, trust domain and
 * check run name, as a new run under the delivery's trigger keys — once the sender is
 * shown, by the API and now, to have write permission or more. Only existing runs are
 * re-run, so the approval of a fork's pull request is never bypassed: a notice (approval
 * needed, broken pipeline) has no run, and a fork's run re-runs exactly the SHA that was
 * approved. Returns the new runs (none when the sender may not run).
 */
export async function rerunRuns(
  work: GitHubWork,
  request: {
    deliveryId: string;
    installationId: number;
    repository: RepositoryRef;
    sender: string;
    runs: readonly Run[];
    /** `rerun-no-cache`: skip cache lookups this time; otherwise as the run was. */
    noCache: boolean | 'as-before';
  },
): Promise<Run[]> {
  if (request.runs.length === 0) return [];
  const api = await work.installationApi(request.installationId);
  if (!(await mayWrite(api, request.repository, request.sender))) {
    work.logger.info(
      { deliveryId: request.deliveryId, sender: request.sender, repository: request.repository.fullName },
      're-run refused: the sender lacks write permission',
    );
    return [];
  }
  // Keyed by the run re-run, not its place in a list: a retried delivery makes each once.
  return queueCheckedRuns(work, {
    installationId: request.installationId,
    logContext: { deliveryId: request.deliveryId, rerunOf: request.runs.map((run) => run.id) },
    runs: request.runs.flatMap((original) =>
      original.commit === null
        ? []
        : [
            {
              ...definitionOf({ ...original, commit: original.commit }),
              noCache: request.noCache === 'as-before' ? original.noCache : request.noCache,
              triggerKey: `delivery:${request.deliveryId}:${original.id}`,
              submittedBy: request.sender,
              trigger: 'rerun' as const,
              automatic: false,
              checkName: original.checkName ?? work.github.checkName,
            },
          ],
    ),
  });
}
