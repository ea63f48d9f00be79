import type { CommentCommand } from '../../../core/params/comment-command.js';
import type { ParamSpec } from '../../../schemas/pipeline.js';
import { cancelFromComment } from './cancel-from-comment.js';
import { CommentThread } from './comment-thread.js';
import type { GitHubApi, GitHubWork } from '../github-work.js';
import { mayWrite } from './may-write.js';
import { readPipelineAt } from './read-pipeline-at.js';
import { readPullRequest } from './read-pull-request.js';
import { renderHelpReply, renderRejection } from '../render/render-replies.js';
import type { RepositoryRef } from '../repository-ref.js';
import { runFromComment } from './run-from-comment.js';

/** A `/fluksio` command written in a pull request's conversation. */
export interface CommentCommandEvent {
  deliveryId: string;
  /** Not the delivery's first attempt (an earlier one may have replied before its worker died). */
  retried: boolean;
  installationId: number;
  repository: RepositoryRef;
  prNumber: number;
  commentId: number;
  commenter: string;
  command: CommentCommand;
}

/**
 * Answers a `/fluksio` command (DESIGN §4, §8): 👀 at once; then only a commenter with
 * write permission or more (asked from the API) is obeyed — anyone else gets a reply and
 * 😕; `run` queues runs, `cancel` cancels this pull request's runs, `help` replies with
 * the grammar and the pipeline's params, and a command that cannot be understood is
 * refused saying exactly what was wrong and what the pipeline accepts.
 */
export async function answerCommentCommand(work: GitHubWork, event: CommentCommandEvent): Promise<void> {
  const api = await work.installationApi(event.installationId);
  const thread = new CommentThread(
    api,
    event.repository,
    event.prNumber,
    event.commentId,
    { id: event.deliveryId, retried: event.retried },
    work.logger.child({ deliveryId: event.deliveryId }),
  );
  await thread.react('eyes');
  if (!(await mayWrite(api, event.repository, event.commenter))) {
    work.logger.info(
      { deliveryId: event.deliveryId, commenter: event.commenter, repository: event.repository.fullName },
      'command refused: the commenter lacks write permission',
    );
    await thread.refuse(
      `😕 Nothing ran: @${event.commenter} does not have write permission on ${event.repository.fullName}. fluksio runs code on its runners only for collaborators with write, maintain or admin permission.`,
    );
    return;
  }
  const { command } = event;
  switch (command.kind) {
    case 'run':
      return runFromComment(work, api, thread, {
        deliveryId: event.deliveryId,
        installationId: event.installationId,
        commenter: event.commenter,
        command,
      });
    case 'cancel':
      return cancelFromComment(work, thread, { commenter: event.commenter, runId: command.runId });
    case 'help':
      return thread.reply(renderHelpReply(await paramsAtHead(api, thread)));
    case 'invalid':
      return thread.refuse(
        renderRejection(
          command.problems.map((problem) => problem.message),
          await paramsAtHead(api, thread),
        ),
      );
  }
}

/** The params the pipeline at the pull request's head declares, or null when it cannot be read. */
async function paramsAtHead(
  api: GitHubApi,
  thread: { repository: RepositoryRef; prNumber: number },
): Promise<Readonly<Record<string, ParamSpec>> | null> {
  const pullRequest = await readPullRequest(api, thread.repository, thread.prNumber);
  const read = await readPipelineAt(api, thread.repository, pullRequest.head.sha);
  return read.state === 'valid' ? read.pipeline.params : null;
}
