import type { Logger } from 'pino';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';

/** The reactions fluksio answers a command with (DESIGN §4). */
export type CommandReaction = 'eyes' | 'rocket' | 'confused';

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

  /** Replies on the pull request; a failure is thrown, for the delivery to be retried. */
  async reply(body: string): Promise<void> {
    await this.api.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      owner: this.repository.owner,
      repo: this.repository.name,
      issue_number: this.prNumber,
      body,
    });
  }

  /** A command refused (DESIGN §4): the reply saying exactly what was wrong, and 😕. */
  async refuse(body: string): Promise<void> {
    await this.reply(body);
    await this.react('confused');
  }
}
