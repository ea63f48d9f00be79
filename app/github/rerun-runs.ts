import { ulid } from 'ulid';
import type { Run } from '../../schemas/tables/runs.js';
import { createCheckedRun } from '../../store/create-checked-run.js';
import { recordWaitingReasons } from '../../store/record-waiting-reasons.js';
import type { GitHubWork } from './github-work.js';
import { mayWrite } from './may-write.js';
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
  const made: Run[] = [];
  const created: string[] = [];
  for (const original of request.runs) {
    if (original.commit === null) continue;
    const checkName = original.checkName ?? work.github.checkName;
    const { run, created: isNew } = await createCheckedRun({
      db: work.db,
      run: {
        id: ulid(),
        repository: original.repository,
        pipelinePath: original.pipelinePath,
        trustDomain: original.trustDomain,
        commit: original.commit,
        params: original.params,
        paramsDigest: original.paramsDigest,
        noCache: request.noCache === 'as-before' ? original.noCache : request.noCache,
        status: 'queued',
        labels: original.labels,
        // Keyed by the run re-run, not its place in a list: a retried delivery makes each once.
        triggerKey: `delivery:${request.deliveryId}:${original.id}`,
        cloneUrl: original.cloneUrl,
        fetchRef: original.fetchRef,
        fork: original.fork,
        retries: original.retries,
        timeoutMs: original.timeoutMs,
        submittedBy: request.sender,
        installationId: request.installationId,
        prNumber: original.prNumber,
        trigger: 'rerun',
        automatic: false,
        metricGoals: original.metricGoals,
        checkName,
        baseRef: original.baseRef,
      },
      check: { installationId: request.installationId, name: checkName },
    });
    made.push(run);
    if (isNew) created.push(run.id);
  }
  if (created.length > 0) {
    await recordWaitingReasons({ db: work.db, onlineWindowMs: work.onlineWindowMs, runIds: created });
    await work.ringDoorbell();
    work.logger.info(
      { deliveryId: request.deliveryId, rerunOf: request.runs.map((run) => run.id), runIds: created },
      'runs queued again',
    );
  }
  for (const run of made) await work.notifications.notifyRun(run.id);
  return made;
}
