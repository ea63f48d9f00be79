import type { Run } from '../../../schemas/tables/runs.js';
import { listPullRequestRuns } from '../../../store/runs/list-pull-request-runs.js';
import { requestCancel } from '../../../store/runs/request-cancel.js';
import type { CommentThread } from './comment-thread.js';
import type { GitHubWork } from '../github-work.js';

/**
 * `/fluksio cancel [run-id]` (DESIGN §4, §8): cancels this pull request's queued and
 * running runs, or the one whose id (or a prefix of it) is given — only ever runs of this
 * pull request, whatever id is named. Replies with what was cancelled, or refuses (😕)
 * when there is nothing to cancel.
 */
export async function cancelFromComment(
  work: GitHubWork,
  thread: CommentThread,
  { commenter, runId }: { commenter: string; runId: string | null },
): Promise<void> {
  const active = await listPullRequestRuns({
    db: work.db,
    repository: thread.repository.fullName,
    prNumber: thread.prNumber,
  });
  const chosen =
    runId === null ? active : active.filter((run) => run.id.toUpperCase().startsWith(runId.toUpperCase()));
  if (chosen.length === 0) {
    await thread.refuse(
      runId === null
        ? '😕 Nothing to cancel: this pull request has no queued or running runs.'
        : `😕 Nothing to cancel: \`${runId}\` names no queued or running run of this pull request.`,
    );
    return;
  }
  if (runId !== null && chosen.length > 1) {
    await thread.refuse(
      `😕 Nothing cancelled: \`${runId}\` names ${chosen.length} runs of this pull request (${chosen.map((run) => `\`${run.id}\``).join(', ')}); give more of the id.`,
    );
    return;
  }
  const cancelled: Run[] = [];
  for (const run of chosen) {
    const changed = await requestCancel({ db: work.db, runId: run.id, reason: `Cancelled by @${commenter}` });
    if (changed) cancelled.push(changed);
    await work.ringRunBell(run.id);
    await work.notifications.notifyRun(run.id);
  }
  work.logger.info({ runIds: cancelled.map((run) => run.id), by: commenter }, 'runs cancelled by a command');
  await thread.reply(
    [
      cancelled.length === 1 ? 'Cancelled 1 run:' : `Cancelled ${cancelled.length} runs:`,
      '',
      ...cancelled.map(
        (run) =>
          `- \`${run.id}\` ${run.status === 'running' ? '(stopping on its runner)' : `(${run.status})`}`,
      ),
    ].join('\n'),
  );
}
