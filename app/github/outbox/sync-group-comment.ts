import type { Run } from '../../../schemas/tables/runs.js';
import { findGroupComment } from '../../../store/outbox/find-group-comment.js';
import { listGroupRuns } from '../../../store/runs/list-group-runs.js';
import { markOutboxSent } from '../../../store/outbox/mark-outbox-sent.js';
import { recordGroupCommentId } from '../../../store/outbox/record-group-comment-id.js';
import { repositoryParams, type OutboxOctokit } from './outbox-octokit.js';
import { findGroupMarker, renderGroupComment } from '../render/render-group-comment.js';
import type { SyncContext } from './sync-context.js';
import { outboxBaseline } from './outbox-baseline.js';

/** Comments per page when looking for the marked one (GitHub's maximum). */
const PAGE = 100;

/**
 * Brings a sweep's comparison comment up to date (DESIGN §8): rendered from the group's
 * runs as they are now, each against the sweep's baseline (the one its finished members
 * were fixed with, else its first member's, as that member's check run finds it); created on the pull request when no id is recorded — after
 * looking for a comment that carries the group's hidden marker, so a lost response or a
 * crash after the create never makes a second comment — and otherwise edited in place. A
 * comment someone deleted is made again. Records the render version sent, compare-and-set,
 * and syncs again while the group changed meanwhile.
 */
export async function syncGroupComment(context: SyncContext, groupId: string): Promise<void> {
  const { db } = context;
  for (;;) {
    const comment = await findGroupComment({ db, groupId });
    if (!comment || comment.sentVersion >= comment.renderVersion) return;
    const runs = await listGroupRuns({ db, groupId, repository: comment.repository });
    const octokit = await context.github(comment.installationId);
    const { owner, repo } = repositoryParams(comment.repository);
    // The sweep's one baseline: the one its members were fixed with as they finished (they
    // share it, fixRunBaseline), else its first member's, found as that member's check run
    // finds it (the members share a commit and base branch, and never compare with each other).
    const first = firstMember(runs);
    const from = runs.find((run) => run.baselineFixed) ?? first;
    const baseline = from ? await outboxBaseline({ db, octokit, run: from, logger: context.logger }) : null;
    const body = renderGroupComment({
      groupId,
      runs: runs.map((run) => ({ run, metrics: run.metrics, checkName: run.checkName ?? context.checkName })),
      goals: first?.metricGoals ?? {},
      baseline,
      sweepUrl:
        context.pageLinks && runs[0]
          ? `${context.apiBaseUrlForLinks.replace(/\/+$/, '')}/groups/${encodeURIComponent(groupId)}?${context.pageLinks.sign(comment.repository)}`
          : null,
    });
    let commentId = comment.commentId ?? (await findMarkedComment(octokit, comment, groupId));
    if (commentId === null) {
      const { data } = await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        owner,
        repo,
        issue_number: comment.prNumber,
        body,
      });
      commentId = Number(data.id);
      await recordGroupCommentId({ db, groupId, commentId });
    } else {
      if (commentId !== comment.commentId) await recordGroupCommentId({ db, groupId, commentId });
      try {
        await octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
          owner,
          repo,
          comment_id: commentId,
          body,
        });
      } catch (error) {
        if ((error as { status?: unknown }).status !== 404) throw error;
        context.logger.warn({ groupId, commentId }, 'the sweep comment was deleted; making it again');
        await recordGroupCommentId({ db, groupId, commentId: null });
        continue;
      }
    }
    context.logger.info({ groupId, commentId, renderVersion: comment.renderVersion }, 'sweep comment sent');
    const latest = await markOutboxSent({
      db,
      target: { kind: 'group', id: groupId },
      renderedVersion: comment.renderVersion,
    });
    if (latest === null || latest <= comment.renderVersion) return;
  }
}

/**
 * The id of the pull request's comment, written by an App, that starts with the group's
 * marker, else null. Anyone may comment on a pull request and the group's id is no secret
 * (its page links, a deleted comment's marker): a person's comment carrying the marker is
 * not adopted, edited, and shown as the sweep's results.
 */
async function findMarkedComment(
  octokit: OutboxOctokit,
  comment: { repository: string; prNumber: number },
  groupId: string,
): Promise<number | null> {
  const { owner, repo } = repositoryParams(comment.repository);
  for (let page = 1; ; page += 1) {
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      owner,
      repo,
      issue_number: comment.prNumber,
      per_page: PAGE,
      page,
    });
    const marked = data.find(
      (each) => each.user?.type === 'Bot' && findGroupMarker(each.body ?? '') === groupId,
    );
    if (marked) return Number(marked.id);
    if (data.length < PAGE) return null;
  }
}

/** The member of the grid's first point (the lowest group index). */
function firstMember(runs: readonly Run[]): Run | null {
  return runs.reduce<Run | null>(
    (first, run) =>
      first === null || (run.groupIndex ?? Infinity) < (first.groupIndex ?? Infinity) ? run : first,
    null,
  );
}
