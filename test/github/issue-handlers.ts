import type { DoubleComment } from './github-double-records.js';
import {
  notFound,
  paginate,
  repositoryOf,
  type HandlerContext,
  type OperationHandler,
} from './github-handler.js';
import { githubTime, renderAccount, type Actor } from './github-shapes.js';

/** The bot account the app comments and reacts as: `<slug>[bot]`. */
export function appBot(context: HandlerContext): Actor {
  return { login: `${context.app.slug}[bot]`, type: 'Bot' };
}

function renderComment(context: HandlerContext, comment: DoubleComment): unknown {
  const repository = repositoryOf(context);
  const kind = context.state.pullRequest(repository, comment.issueNumber) ? 'pull' : 'issues';
  return {
    ...(context.route.example() as Record<string, unknown>),
    id: comment.id,
    node_id: `IC_${comment.id}`,
    url: `https://api.github.com/repos/${repository.fullName}/issues/comments/${comment.id}`,
    html_url: `https://github.com/${repository.fullName}/${kind}/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `https://api.github.com/repos/${repository.fullName}/issues/${comment.issueNumber}`,
    body: comment.body,
    user: renderAccount(comment.user),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: comment.user.type === 'Bot' ? 'NONE' : 'COLLABORATOR',
  };
}

const createComment: OperationHandler = (context) => {
  const comment = context.state.addComment(
    repositoryOf(context),
    Number(context.params.issue_number),
    String(context.body.body),
    appBot(context),
  );
  return { status: 201, body: renderComment(context, comment) };
};

const listComments: OperationHandler = (context) => {
  const since = typeof context.query.since === 'string' ? Date.parse(context.query.since) : -Infinity;
  const comments = context.state
    .comments(repositoryOf(context), Number(context.params.issue_number))
    .filter((comment) => Date.parse(comment.updatedAt) >= since);
  const page = paginate(context, comments);
  return {
    status: 200,
    headers: page.headers,
    body: page.items.map((comment) => renderComment(context, comment)),
  };
};

const getComment: OperationHandler = (context) => {
  const comment = context.state.comment(repositoryOf(context), Number(context.params.comment_id));
  return comment ? { status: 200, body: renderComment(context, comment) } : notFound();
};

const updateComment: OperationHandler = (context) => {
  const comment = context.state.comment(repositoryOf(context), Number(context.params.comment_id));
  if (!comment) return notFound();
  comment.previousBodies.push(comment.body);
  comment.body = String(context.body.body);
  comment.updatedAt = githubTime(new Date());
  return { status: 200, body: renderComment(context, comment) };
};

// The comment need not be one the double knows: webhook fixtures make comments it never saw.
const createReaction: OperationHandler = (context) => {
  const user = appBot(context);
  const { reaction, created } = context.state.addReaction({
    repository: repositoryOf(context).fullName,
    commentId: Number(context.params.comment_id),
    content: String(context.body.content),
    user,
  });
  return {
    status: created ? 201 : 200,
    body: {
      ...(context.route.example() as Record<string, unknown>),
      id: reaction.id,
      node_id: `REA_${reaction.id}`,
      user: renderAccount(user),
      content: reaction.content,
      created_at: githubTime(new Date()),
    },
  };
};

/** Comments on issues and pull requests, and reactions to them. */
export const issueHandlers: Record<string, OperationHandler> = {
  'issues/create-comment': createComment,
  'issues/list-comments': listComments,
  'issues/get-comment': getComment,
  'issues/update-comment': updateComment,
  'reactions/create-for-issue-comment': createReaction,
};
