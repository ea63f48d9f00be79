import { findGitHubNotice } from '../../../store/outbox/find-github-notice.js';
import { markOutboxSent } from '../../../store/outbox/mark-outbox-sent.js';
import { recordNoticeCheckRun } from '../../../store/outbox/record-notice-check-run.js';
import { renderActionRequired } from '../render/render-action-required.js';
import type { SyncContext } from './sync-context.js';
import { syncCheckRunOutput } from './sync-check-run-output.js';

/** What a notice's `body` holds: renderActionRequired's request, as the app core recorded it. */
type NoticeRequest = Parameters<typeof renderActionRequired>[0];

/**
 * Brings a notice's `action_required` check run up to date (DESIGN §6, §8), as
 * syncCheckRun does for a run's: adopted by `external_id` (the notice id) or created,
 * updated in place when the notice changed. How many annotations GitHub holds is read
 * back from the check run rather than recorded (notices are rarely sent twice).
 */
export async function syncNotice(context: SyncContext, id: string): Promise<void> {
  const { db } = context;
  for (;;) {
    const notice = await findGitHubNotice({ db, id });
    if (!notice || notice.sentVersion >= notice.renderVersion) return;
    // The body was written by the app core from NoticeRequest; it is not user input.
    const rendered = renderActionRequired(notice.body as NoticeRequest, notice.name);
    const octokit = await context.github(notice.installationId);
    let recorded = notice.checkRunId;
    await syncCheckRunOutput({
      octokit,
      place: {
        repository: notice.repository,
        headSha: notice.headSha,
        externalId: notice.id,
        checkRunId: notice.checkRunId,
        annotationsSent: notice.checkRunId === null ? 0 : null,
        // A notice has one attempt: its check run holds its annotations only.
        annotationsOffset: 0,
        detailsUrl: null,
        startedAt: null,
        completedAt: null,
      },
      rendered,
      record: async ({ checkRunId }) => {
        if (checkRunId === recorded) return;
        await recordNoticeCheckRun({ db, id, checkRunId });
        recorded = checkRunId;
      },
    });
    context.logger.info(
      { noticeId: id, kind: notice.kind, renderVersion: notice.renderVersion },
      'notice sent',
    );
    const latest = await markOutboxSent({
      db,
      target: { kind: 'notice', id },
      renderedVersion: notice.renderVersion,
    });
    if (latest === null || latest <= notice.renderVersion) return;
  }
}
