import { renderCheckRun } from '../../../present/github/render-check-run.js';
import { isFinalRunStatus } from '../../../schemas/statuses.js';
import { findGitHubCheck } from '../../../store/outbox/find-github-check.js';
import { getRunDetail } from '../../../store/runs/get-run-detail.js';
import { markOutboxSent } from '../../../store/outbox/mark-outbox-sent.js';
import { recordAnnotationsOffset } from '../../../store/outbox/record-annotations-offset.js';
import { recordCheckRunProgress } from '../../../store/outbox/record-check-run-progress.js';
import { mainMetric } from '../../pages/main-metric.js';
import { runViewFromDetail } from '../../run-view-from-detail.js';
import { outboxBaseline } from './outbox-baseline.js';
import { RERUN_BUTTONS } from '../render/rerun-buttons.js';
import type { SyncContext } from './sync-context.js';
import { syncCheckRunOutput } from './sync-check-run-output.js';

/** A sync that must wait: an in-progress refresh comes at most every `inProgressRefreshMs`. */
export interface SyncLater {
  refreshAt: number;
}

/**
 * Brings a run's check run up to date with the database (DESIGN §8): reads the run as it
 * is now, renders it with its baseline, creates (or adopts) or updates the check run, and
 * records the render version it sent — compare-and-set, and again while the run changed
 * during the sync, so no state is lost. A running run whose check run GitHub already shows
 * in progress, written less than `inProgressRefreshMs` ago, is not sent now: the result
 * says when it may be.
 */
export async function syncCheckRun(context: SyncContext, runId: string): Promise<SyncLater | null> {
  const { db } = context;
  for (;;) {
    const check = await findGitHubCheck({ db, runId });
    if (!check || check.sentVersion >= check.renderVersion) return null;
    const detail = await getRunDetail({ db, runId });
    if (!detail) return null;
    // A later attempt that started between the two reads reset the annotations' count: read
    // both again, so the count and the annotations rendered are of one attempt.
    if ((await findGitHubCheck({ db, runId }))?.annotationsAttempt !== check.annotationsAttempt) continue;
    const { run } = detail;
    // The change into in progress goes at once; refreshes of a running one are spaced.
    if (run.status === 'running' && check.checkRunId !== null && check.sentStatus === 'in_progress') {
      const refreshAt = check.updatedAt.getTime() + context.inProgressRefreshMs;
      if (refreshAt > Date.now()) return { refreshAt };
    }
    const octokit = await context.github(check.installationId);
    const base = context.apiBaseUrlForLinks.replace(/\/+$/, '');
    const baseline = await outboxBaseline({
      db,
      octokit,
      run,
      logger: context.logger,
    });
    const metric = mainMetric(detail.series, run.metricGoals);
    const view = runViewFromDetail(detail, {
      baseline,
      serverUrl: context.apiBaseUrlForLinks,
      // The run's page, openable by whoever GitHub shows the check run to until the link expires.
      detailsUrl: context.pageLinks
        ? `${base}/runs/${encodeURIComponent(run.id)}?${context.pageLinks.sign(run.repository)}`
        : undefined,
      chart:
        context.pageLinks && metric !== null
          ? {
              metric,
              url: `${base}/pages/charts/runs/${encodeURIComponent(run.id)}/curves.svg?${new URLSearchParams({
                metric,
                ...(baseline ? { baseline: baseline.run.id } : {}),
              }).toString()}&${context.pageLinks.sign(run.repository)}`,
            }
          : null,
    });
    const rendered = renderCheckRun(view, { name: check.name, actions: RERUN_BUTTONS });
    const attempt = check.annotationsAttempt;
    const recorded = (accepted: boolean) => {
      if (!accepted) throw new AttemptStartedDuringSync();
    };
    try {
      await syncCheckRunOutput({
        octokit,
        place: {
          repository: check.repository,
          headSha: check.headSha,
          externalId: run.id,
          checkRunId: check.checkRunId,
          annotationsSent: context.uncertain ? null : check.annotationsSent,
          annotationsOffset: check.annotationsOffset,
          detailsUrl: view.links.detailsUrl,
          startedAt: run.startedAt,
          completedAt: isFinalRunStatus(run.status) ? run.finishedAt : null,
        },
        rendered,
        record: async (progress) =>
          recorded(
            await recordCheckRunProgress({ db, runId, attempt, status: rendered.status, ...progress }),
          ),
        recordOffset: async (annotationsOffset) =>
          recorded(await recordAnnotationsOffset({ db, runId, attempt, annotationsOffset })),
      });
    } catch (error) {
      // What GitHub accepted counts for the earlier attempt, whose count was reset: the new
      // attempt's sync learns GitHub's count afresh (its offset is unknown) and goes on.
      if (error instanceof AttemptStartedDuringSync) continue;
      throw error;
    }
    context.logger.info(
      { runId, status: rendered.status, renderVersion: check.renderVersion },
      'check run sent',
    );
    const latest = await markOutboxSent({
      db,
      target: { kind: 'check', id: runId },
      renderedVersion: check.renderVersion,
    });
    if (latest === null || latest <= check.renderVersion) return null;
  }
}

/** A later attempt of the run started while a sync of an earlier one was in flight. */
class AttemptStartedDuringSync extends Error {
  constructor() {
    super('A later attempt of the run started during the sync');
    this.name = 'AttemptStartedDuringSync';
  }
}
