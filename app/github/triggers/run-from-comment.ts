import { formatProblems } from '../../../core/problem.js';
import { resolveParams } from '../../../core/params/resolve-params.js';
import type { CommentCommand } from '../../../core/params/comment-command.js';
import { findDeliveryCommit } from '../../../store/deliveries/find-delivery-commit.js';
import type { CommentThread } from './comment-thread.js';
import type { GitHubApi, GitHubWork } from '../github-work.js';
import { headCommitBot } from './head-commit-bot.js';
import { isFork } from './is-fork.js';
import type { RepositoryRef } from '../repository-ref.js';
import { isBotAccount } from '../webhook-payloads.js';
import { queueGitHubRuns } from './queue-github-runs.js';
import { noticeId, raiseNotice } from './raise-notice.js';
import { findGitHubNotice } from '../../../store/outbox/find-github-notice.js';
import type { PullRequest } from '../webhook-payloads.js';
import { PIPELINE_FILES_TEXT, readPipelineAt } from './read-pipeline-at.js';
import { readPullRequest } from './read-pull-request.js';
import {
  renderApprovalNeeded,
  renderQueued,
  renderRejection,
  renderShaRefused,
} from '../render/render-replies.js';

/**
 * The bot a comment's approval must name the whole head for: the pull request's author
 * when a bot opened it, else the bot whose push of `head` the automatic path held for
 * approval (run-pull-request-head.ts records it in that notice), else the bot GitHub says
 * made the head commit (a comment handled before the push event, or a pipeline without
 * `on.pull_request`); null for a person's head.
 */
async function pullRequestHeadBot(
  work: GitHubWork,
  api: GitHubApi,
  pullRequest: PullRequest,
  repository: RepositoryRef,
  head: string,
): Promise<{ login: string; did: 'opened' | 'pushed' } | null> {
  if (pullRequest.user && isBotAccount(pullRequest.user))
    return { login: pullRequest.user.login, did: 'opened' };
  const notice = await findGitHubNotice({ db: work.db, id: noticeId('approval', repository.fullName, head) });
  const pushedBy = notice?.body.pushedBy;
  if (typeof pushedBy === 'string') return { login: pushedBy, did: 'pushed' };
  const madeBy = await headCommitBot(api, repository, head);
  return madeBy === null ? null : { login: madeBy, did: 'pushed' };
}

/**
 * `/fluksio run [k=v …] [--no-cache] [--sha <prefix>]` from someone allowed to run
 * (DESIGN §4, §5, §8). The commit is the pull request's head read now — recorded at once,
 * so later pushes change nothing for these runs. `--sha` must name that head, or the
 * command is refused naming the current one; a fork's pull request runs only with `--sha`,
 * the commit a maintainer reviewed, and in the fork's own trust domain. The pipeline at
 * that commit (`fluksio.yml`, or a DVC project's `dvc.yaml`, whose params are typed from
 * its params.yaml) is read and validated, the params resolved against it (a sweep is a
 * group of at most 32 runs); anything wrong is a reply saying exactly what and 😕, with no run.
 * Queued runs get 🚀 and a reply listing them; a sweep's listing is its comparison comment.
 */
export async function runFromComment(
  work: GitHubWork,
  api: GitHubApi,
  thread: CommentThread,
  {
    deliveryId,
    installationId,
    commenter,
    command,
  }: {
    deliveryId: string;
    installationId: number;
    commenter: string;
    command: Extract<CommentCommand, { kind: 'run' }>;
  },
): Promise<void> {
  const { repository } = thread;
  const pullRequest = await readPullRequest(api, repository, thread.prNumber);
  // The head is read once: a retry of this delivery (its worker died after queueing some
  // runs) goes on at the commit those runs are pinned to, already approved and checked.
  const pinned = await findDeliveryCommit({ db: work.db, deliveryId });
  const head = pinned ?? pullRequest.head.sha;
  const fork = isFork(pullRequest);
  // A bot's pull request (Dependabot's) is approved as a fork's is: its next push may come
  // between a maintainer's review and the comment. So is a head a bot pushed to a person's
  // pull request, as its push event or GitHub's record of the commit says (pullRequestHeadBot).
  const bot =
    fork || pinned !== null ? null : await pullRequestHeadBot(work, api, pullRequest, repository, head);
  if (pinned === null) {
    // A fork's approval names the whole SHA: a short prefix is a few seconds of hashing for
    // its author to match with a commit nobody reviewed.
    if ((fork || bot !== null) && (command.sha === null || command.sha.length < head.length)) {
      await thread.refuse(renderApprovalNeeded({ headSha: head, given: command.sha, bot }));
      return;
    }
    if (command.sha !== null && !head.startsWith(command.sha)) {
      await thread.refuse(renderShaRefused({ given: command.sha, currentHead: head }));
      return;
    }
  }
  const read = await readPipelineAt(api, repository, head);
  if (read.state === 'absent') {
    await thread.refuse(
      renderRejection([`There is no ${PIPELINE_FILES_TEXT} at ${head}, so there is nothing to run`], null),
    );
    return;
  }
  if (read.state === 'broken') {
    await raiseNotice(work, {
      installationId,
      repository: repository.fullName,
      headSha: head,
      body: { kind: 'broken-pipeline', problems: read.problems, path: read.path, sha: head },
    });
    await thread.refuse(renderRejection(formatProblems(read.problems, read.path).split('\n'), null));
    return;
  }
  const resolved = resolveParams(read.pipeline.params, command.assignments);
  if (resolved.problems.length > 0) {
    await thread.refuse(
      renderRejection(
        resolved.problems.map((problem) => problem.message),
        read.pipeline.params,
      ),
    );
    return;
  }
  const runs = await queueGitHubRuns(work, {
    deliveryId,
    installationId,
    repository,
    commit: head,
    pipelinePath: read.path,
    pipeline: read.pipeline,
    grid: resolved.grid,
    swept: resolved.swept,
    noCache: command.noCache,
    trigger: 'comment',
    automatic: false,
    pullRequest: { number: pullRequest.number, baseRef: pullRequest.base.ref, fork },
    branch: pullRequest.head.ref,
    requestedBy: commenter,
  });
  await thread.react('rocket');
  // A sweep's one answer is its comparison comment, edited in place as its runs go from
  // queued to finished (sync-group-comment.ts): a reply here would be a second comment.
  if (runs.length > 1) return;
  await thread.reply(
    renderQueued({
      runs: runs.map((run) => ({
        id: run.id,
        params: run.params,
        checkName: run.checkName ?? work.github.checkName,
      })),
      notes: read.notes,
    }),
  );
}
