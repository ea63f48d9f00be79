import {
  DEFAULT_ACTOR,
  githubTime,
  pullRequestId,
  pullRequestUrls,
  renderAccount,
  renderPullRequestSide,
  type Actor,
  type FixtureRepository,
  type PullRequestSide,
} from './github-shapes.js';
import type { InstallationPermissions } from './github-double-records.js';
import {
  retargetPayload,
  toDelivery,
  webhookExample,
  ZERO_SHA,
  type CommonOptions,
  type Payload,
  type WebhookDelivery,
} from './webhook-fixture-base.js';

export { checkRunPayload, checkSuitePayload } from './check-webhook-fixtures.js';
export type { FixtureEventName, WebhookDelivery } from './webhook-fixture-base.js';

let nextCommentId = 4_500_000_000;

/** A `push` to a branch (`ref` `main` or `refs/heads/main`); `after` all zeros deletes it. */
export function pushPayload(
  options: CommonOptions & { ref?: string; before?: string; after: string; message?: string },
): WebhookDelivery<'push'> {
  const { repo, after } = options;
  const sender = options.sender ?? DEFAULT_ACTOR;
  const branch = options.ref ?? repo.defaultBranch ?? 'main';
  const ref = branch.startsWith('refs/') ? branch : `refs/heads/${branch}`;
  const before = options.before ?? ZERO_SHA;
  const base = webhookExample(
    'push',
    (payload) => String(payload.ref).startsWith('refs/heads/') && payload.head_commit !== null,
  );
  const fullName = `${repo.owner}/${repo.name}`;
  const commitTemplate = base.head_commit as Payload;
  const commit = {
    ...commitTemplate,
    id: after,
    tree_id: after,
    message: options.message ?? `Commit ${after.slice(0, 7)}`,
    timestamp: new Date().toISOString(),
    url: `https://github.com/${fullName}/commit/${after}`,
    author: { name: sender.login, email: `${sender.login}@users.noreply.github.com`, username: sender.login },
    committer: {
      name: sender.login,
      email: `${sender.login}@users.noreply.github.com`,
      username: sender.login,
    },
  };
  const deleted = after === ZERO_SHA;
  return toDelivery('push', {
    ...retargetPayload(base, repo, options.installationId, sender),
    ref,
    before,
    after,
    created: before === ZERO_SHA,
    deleted,
    forced: false,
    base_ref: null,
    compare: `https://github.com/${fullName}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: deleted ? [] : [commit],
    head_commit: deleted ? null : commit,
    pusher: { name: sender.login, email: `${sender.login}@users.noreply.github.com` },
  });
}

/** A `pull_request` event; `head.repoId` another id makes a fork, `null` a deleted one. */
export function pullRequestPayload(
  options: CommonOptions & {
    action: 'opened' | 'synchronize' | 'reopened' | 'closed' | 'edited';
    number: number;
    head: PullRequestSide;
    base: PullRequestSide;
    /** The head before a `synchronize`. */
    before?: string;
    /** The pull request's author. @defaultValue the sender */
    user?: Actor;
    title?: string;
  },
): WebhookDelivery<'pull_request'> {
  const { repo, action, number } = options;
  const sender = options.sender ?? DEFAULT_ACTOR;
  const base = webhookExample(
    'pull_request',
    (payload) =>
      payload.action === (action === 'edited' ? 'opened' : action) && payload.installation !== undefined,
  );
  const payload = retargetPayload(base, repo, options.installationId, sender);
  const template = payload.pull_request as Payload;
  return toDelivery('pull_request', {
    ...payload,
    action,
    number,
    ...(action === 'synchronize' && { before: options.before ?? ZERO_SHA, after: options.head.sha }),
    pull_request: {
      ...template,
      ...pullRequestUrls(repo, number, options.head.sha),
      id: pullRequestId(repo, number),
      node_id: `PR_${repo.id}_${number}`,
      number,
      state: action === 'closed' ? 'closed' : 'open',
      title: options.title ?? `Pull request #${number}`,
      user: renderAccount(options.user ?? sender),
      head: renderPullRequestSide(template.head as Payload, options.head, repo),
      base: renderPullRequestSide(template.base as Payload, options.base, repo),
      merged: false,
      merged_at: null,
      draft: false,
    },
  });
}

/**
 * An `issue_comment` event. GitHub's examples are all on issues and mostly lack
 * `installation`: a pull request's comment carries `issue.pull_request`, added here.
 */
export function issueCommentPayload(
  options: Omit<CommonOptions, 'sender'> & {
    body: string;
    number: number;
    /** @defaultValue `true` */
    isPullRequest?: boolean;
    /** The author, also the sender. @defaultValue `{ login: 'octocat', type: 'User' }` */
    user?: Actor;
    /** @defaultValue `'created'` */
    action?: 'created' | 'edited' | 'deleted';
    /** The body before an edit. */
    previousBody?: string;
    /** @defaultValue a fresh id */
    commentId?: number;
  },
): WebhookDelivery<'issue_comment'> {
  const { repo, number } = options;
  const action = options.action ?? 'created';
  const user = options.user ?? DEFAULT_ACTOR;
  const isPullRequest = options.isPullRequest ?? true;
  const base = webhookExample('issue_comment', (payload) => payload.action === action);
  const fullName = `${repo.owner}/${repo.name}`;
  const apiUrl = `https://api.github.com/repos/${fullName}`;
  const kind = isPullRequest ? 'pull' : 'issues';
  const id = options.commentId ?? nextCommentId++;
  const now = githubTime(new Date());
  const payload = retargetPayload(base, repo, options.installationId, user);
  const { pull_request: _examplePullRequest, ...issue } = payload.issue as Payload;
  return toDelivery('issue_comment', {
    ...payload,
    action,
    ...(action === 'edited' && { changes: { body: { from: options.previousBody ?? '' } } }),
    issue: {
      ...issue,
      url: `${apiUrl}/issues/${number}`,
      html_url: `https://github.com/${fullName}/${kind}/${number}`,
      comments_url: `${apiUrl}/issues/${number}/comments`,
      events_url: `${apiUrl}/issues/${number}/events`,
      labels_url: `${apiUrl}/issues/${number}/labels{/name}`,
      id: pullRequestId(repo, number) + 1,
      node_id: `I_${repo.id}_${number}`,
      number,
      state: 'open',
      ...(isPullRequest && {
        pull_request: {
          url: `${apiUrl}/pulls/${number}`,
          html_url: `https://github.com/${fullName}/pull/${number}`,
          diff_url: `https://github.com/${fullName}/pull/${number}.diff`,
          patch_url: `https://github.com/${fullName}/pull/${number}.patch`,
          merged_at: null,
        },
      }),
    },
    comment: {
      ...(payload.comment as Payload),
      id,
      node_id: `IC_${id}`,
      url: `${apiUrl}/issues/comments/${id}`,
      html_url: `https://github.com/${fullName}/${kind}/${number}#issuecomment-${id}`,
      issue_url: `${apiUrl}/issues/${number}`,
      body: options.body,
      user: renderAccount(user),
      author_association: user.type === 'Bot' ? 'NONE' : 'CONTRIBUTOR',
      performed_via_github_app: null,
      created_at: now,
      updated_at: now,
    },
  });
}

/** An `installation` event on `account`, with the repositories it covers. */
export function installationPayload(options: {
  action: 'created' | 'deleted' | 'suspend' | 'unsuspend' | 'new_permissions_accepted';
  installationId: number;
  account: Actor;
  repositories?: FixtureRepository[];
  permissions?: InstallationPermissions;
  appId?: number;
  sender?: Actor;
}): WebhookDelivery<'installation'> {
  const { action, installationId, account } = options;
  const base = webhookExample('installation', (payload) => payload.action === action);
  const template = base.installation as Payload;
  const renderedAccount = renderAccount({ type: 'Organization', ...account });
  return toDelivery('installation', {
    ...base,
    action,
    installation: {
      ...template,
      id: installationId,
      account: renderedAccount,
      access_tokens_url: `https://api.github.com/app/installations/${installationId}/access_tokens`,
      html_url: `https://github.com/settings/installations/${installationId}`,
      ...(options.appId !== undefined && { app_id: options.appId }),
      target_id: renderedAccount.id,
      target_type: renderedAccount.type,
      repository_selection: 'selected',
      ...(options.permissions && { permissions: options.permissions }),
    },
    repositories: (options.repositories ?? []).map((repository) => ({
      id: repository.id,
      node_id: `R_${repository.id}`,
      name: repository.name,
      full_name: `${repository.owner}/${repository.name}`,
      private: repository.private ?? false,
    })),
    sender: renderAccount(options.sender ?? DEFAULT_ACTOR),
  });
}
