import type { NoticeKind } from '../../../schemas/tables/github-notices.js';
import { recordNotice } from '../../../store/outbox/record-notice.js';
import type { GitHubWork } from '../github-work.js';
import type { renderActionRequired } from '../render/render-action-required.js';

/** What an `action_required` check run says: renderActionRequired's input. */
export type NoticeBody = Parameters<typeof renderActionRequired>[0] & { kind: NoticeKind };

/** The id of a repository's notice of `kind` on `headSha`: one per commit and kind. */
export function noticeId(kind: NoticeKind, repository: string, headSha: string): string {
  return `${kind}:${repository}:${headSha}`;
}

/**
 * Puts an `action_required` check run on a commit that gets no run (DESIGN §6, §8): a
 * fork's pull request waiting for approval, or a broken pipeline file. One per commit and
 * kind, however many events name it; the outbox sends it. Returns the notice's id.
 */
export async function raiseNotice(
  work: GitHubWork,
  {
    installationId,
    repository,
    headSha,
    body,
  }: { installationId: number; repository: string; headSha: string; body: NoticeBody },
): Promise<string> {
  const id = noticeId(body.kind, repository, headSha);
  await recordNotice({
    db: work.db,
    notice: { id, installationId, repository, headSha, name: work.github.checkName, kind: body.kind, body },
  });
  await work.notifications.notifyNotice(id);
  work.logger.info({ noticeId: id, repository, headSha, kind: body.kind }, 'action required');
  return id;
}
