import { newId } from '../../../core/new-id.js';
import { digestOf } from '../../../core/canonical-json.js';
import type { NewRun, Run } from '../../../schemas/tables/runs.js';
import { createCheckedRun } from '../../../store/runs/create-checked-run.js';
import type { GitHubWork } from '../github-work.js';

/**
 * What a trigger decides about a new run reporting to GitHub; its id, status, params
 * digest and installation are set here, the same for every trigger.
 */
export type GitHubRunFields = Omit<NewRun, 'id' | 'status' | 'paramsDigest' | 'installationId'> & {
  triggerKey: string;
  commit: string;
  checkName: string;
};

/**
 * Queues runs that report to GitHub, each with its check run's row (createCheckedRun: a
 * run whose trigger key exists already is found, not made again) and the reason it waits
 * for (written by the same INSERT), rings the runners' doorbell, then hands every run's check
 * run to the outbox — also for runs an earlier attempt made, so a retry completes what a
 * crash interrupted. Returns the runs in the order given.
 */
export async function queueCheckedRuns(
  work: GitHubWork,
  request: {
    installationId: number;
    runs: readonly GitHubRunFields[];
    /** What the log line says about where the runs came from. */
    logContext: Record<string, unknown>;
  },
): Promise<Run[]> {
  const queued: Run[] = [];
  const created: string[] = [];
  for (const fields of request.runs) {
    const { run, created: isNew } = await createCheckedRun({
      db: work.db,
      run: {
        ...fields,
        id: newId(),
        status: 'queued',
        paramsDigest: digestOf(fields.params),
        installationId: request.installationId,
      },
      check: { installationId: request.installationId, name: fields.checkName },
      onlineWindowMs: work.onlineWindowMs,
    });
    queued.push(run);
    if (isNew) created.push(run.id);
  }
  if (created.length > 0) {
    await work.ringDoorbell();
    work.logger.info({ ...request.logContext, runIds: created }, 'runs queued');
  }
  for (const run of queued) await work.notifications.notifyRun(run.id);
  return queued;
}
