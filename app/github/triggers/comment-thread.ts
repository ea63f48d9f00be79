import type { Logger } from 'pino';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';
import { isReplyTo, markReply } from '../render/reply-marker.js';

/** Comments per page when looking for an earlier attempt's reply (GitHub's maximum). */
const PAGE = 100;

/** The reactions fluksio answers a command with (DESIGN §4). */
export type CommandReaction = 'eyes' | 'rocket' | 'confused';

/** The delivery a command came in, and whether an earlier attempt at it may have replied. */
export interface ReplyingDelivery {
  id: string;
  /** Not the delivery's first attempt: its worker may have died after replying. */
  retried: boolean;
}

/**
 * Where a `/fluksio` command was written — a pull request's conversation and the comment
 * — and the two ways fluksio answers there: a reaction on the comment, a reply below it.
 */
export class CommentThread {
  constructor(
    private readonly api: GitHubApi,
    readonly repository: RepositoryRef,
    readonly prNumber: number,
    readonly commentId: number,
    private readonly delivery: ReplyingDelivery,
    private readonly logger: Logger,
  ) {}

  /**
   * Reacts to the command. A reaction is an acknowledgement, not the answer: one GitHub
   * refuses is logged and the command is handled all the same (GitHub answers 200, not a
   * second reaction, when a retried delivery reacts again).
   */
  async react(content: CommandReaction): Promise<void> {
    try {
      await this.api.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
        owner: this.repository.owner,
        repo: this.repository.name,
        comment_id: this.commentId,
        content,
      });
    } catch (error) {
      this.logger.warn({ err: error, commentId: this.commentId, content }, 'could not react to the command');
    }
  }

  /**
   * Replies on the pull request, the reply marked with the delivery's id (reply-marker.ts);
   * on a retried attempt, only when no comment carries that marker yet — the attempt that
   * posted it died before the delivery was recorded processed. A failure is thrown, for the
   * delivery to be retried.
   */
  async reply(body: string): Promise<void> {
    if (this.delivery.retried && (await this.replied())) {
      this.logger.info({ prNumber: this.prNumber }, 'an earlier attempt replied already; not replying again');
      return;
    }
    await this.api.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      owner: this.repository.owner,
      repo: this.repository.name,
      issue_number: this.prNumber,
      body: markReply(body, this.delivery.id),
    });
  }

  /** Whether the pull request has a comment carrying this delivery's reply marker. */
  private async replied(): Promise<boolean> {
    for (let page = 1; ; page += 1) {
      const { data } = await this.api.request('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        owner: this.repository.owner,
        repo: this.repository.name,
        issue_number: this.prNumber,
        per_page: PAGE,
        page,
      });
      if (data.some((comment) => isReplyTo(comment.body ?? '', this.delivery.id))) return true;
      if (data.length < PAGE) return false;
    }
  }

  /** A command refused (DESIGN §4): the reply saying exactly what was wrong, and 😕. */
  async refuse(body: string): Promise<void> {
    await this.reply(body);
    await this.react('confused');
  }
}
