import { listPullRequestRuns } from '../../../store/runs/list-pull-request-runs.js';
import { requestCancel } from '../../../store/runs/request-cancel.js';
import type { GitHubWork } from '../github-work.js';

/**
 * A new push to a pull request cancels its automatic runs of other commits still queued
 * or running (DESIGN §8); runs someone asked for with a command or a button are left
 * alone. Returns the ids of the runs cancelled.
 */
export async function cancelSupersededRuns(
  work: GitHubWork,
  { repository, prNumber, head }: { repository: string; prNumber: number; head: string },
): Promise<string[]> {
  const stale = await listPullRequestRuns({
    db: work.db,
    repository,
    prNumber,
    automaticOnly: true,
    exceptCommit: head,
  });
  const cancelled: string[] = [];
  for (const run of stale) {
    const changed = await requestCancel({
      db: work.db,
      runId: run.id,
      reason: `Superseded: pull request #${prNumber} was pushed to (now at ${head.slice(0, 12)})`,
    });
    if (!changed) continue;
    cancelled.push(run.id);
    await work.ringRunBell(run.id);
    await work.notifications.notifyRun(run.id);
  }
  if (cancelled.length > 0)
    work.logger.info({ repository, prNumber, runIds: cancelled }, 'superseded runs cancelled');
  return cancelled;
}
