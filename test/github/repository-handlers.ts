import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { CommitInit, DoubleRepository } from './github-double-records.js';
import {
  notFound,
  paginate,
  repositoryOf,
  type HandlerContext,
  type OperationHandler,
} from './github-handler.js';
import {
  pullRequestId,
  pullRequestUrls,
  renderAccount,
  renderPullRequestSide,
  renderRepository,
  retarget,
} from './github-shapes.js';

const EXAMPLE_REPOSITORY = 'octocat/Hello-World';

/** Git's blob id of `content`, as the contents API reports it in `sha`. */
function gitBlobSha(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** A commit object as the commits and compare APIs render it. */
export function renderCommit(
  template: Record<string, unknown>,
  repository: DoubleRepository,
  commit: CommitInit,
  parent: string | undefined,
): Record<string, unknown> {
  const templateSha = String(template.sha);
  const rendered = retarget(template, [
    [EXAMPLE_REPOSITORY, repository.fullName],
    [templateSha, commit.sha],
  ]);
  const apiUrl = `https://api.github.com/repos/${repository.fullName}`;
  return {
    ...rendered,
    sha: commit.sha,
    node_id: `C_${commit.sha}`,
    commit: {
      ...(rendered.commit as Record<string, unknown>),
      message: commit.message ?? `Commit ${commit.sha.slice(0, 7)}`,
    },
    ...(commit.author && { author: renderAccount(commit.author) }),
    ...(commit.committer && { committer: renderAccount(commit.committer) }),
    parents: parent
      ? [
          {
            sha: parent,
            url: `${apiUrl}/commits/${parent}`,
            html_url: `https://github.com/${repository.fullName}/commit/${parent}`,
          },
        ]
      : [],
  };
}

const getRepository: OperationHandler = (context) => {
  const example = context.route.example() as Record<string, unknown>;
  // The example's `source`/`parent` describe a fork's origin, which these repositories are not.
  delete example.source;
  delete example.parent;
  delete example.template_repository;
  return { status: 200, body: { ...renderRepository(example, repositoryOf(context)), language: null } };
};

const getContent: OperationHandler = (context) => {
  const repository = repositoryOf(context);
  const path = String(context.params.path);
  const ref = typeof context.query.ref === 'string' ? context.query.ref : repository.defaultBranch;
  const content = context.state.file(repository, ref, path);
  if (!content) return notFound();
  if (context.accept.includes('raw')) {
    return { status: 200, raw: { contentType: 'text/plain; charset=utf-8', data: content } };
  }
  const sha = gitBlobSha(content);
  const apiUrl = `https://api.github.com/repos/${repository.fullName}`;
  const htmlUrl = `https://github.com/${repository.fullName}/blob/${ref}/${path}`;
  const selfUrl = `${apiUrl}/contents/${path}?ref=${encodeURIComponent(ref)}`;
  return {
    status: 200,
    body: {
      type: 'file',
      encoding: 'base64',
      size: content.length,
      name: posix.basename(path),
      path,
      // GitHub wraps the base64 text at 60 characters.
      content: `${(content.toString('base64').match(/.{1,60}/g) ?? []).join('\n')}\n`,
      sha,
      url: selfUrl,
      git_url: `${apiUrl}/git/blobs/${sha}`,
      html_url: htmlUrl,
      download_url: `https://raw.githubusercontent.com/${repository.fullName}/${ref}/${path}`,
      _links: { git: `${apiUrl}/git/blobs/${sha}`, self: selfUrl, html: htmlUrl },
    },
  };
};

const getPullRequest: OperationHandler = (context) => {
  const repository = repositoryOf(context);
  const number = Number(context.params.pull_number);
  const pullRequest = context.state.pullRequest(repository, number);
  if (!pullRequest) return notFound();
  const example = retarget(context.route.example() as Record<string, unknown>, [
    [EXAMPLE_REPOSITORY, repository.fullName],
  ]);
  const state = pullRequest.state ?? 'open';
  return {
    status: 200,
    body: {
      ...example,
      ...pullRequestUrls(repository, number, pullRequest.head.sha),
      id: pullRequestId(repository, number),
      node_id: `PR_${repository.id}_${number}`,
      number,
      state,
      title: pullRequest.title ?? `Pull request #${number}`,
      user: renderAccount(pullRequest.user ?? { login: 'contributor' }),
      labels: [],
      milestone: null,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      auto_merge: null,
      draft: false,
      merged: false,
      merged_at: null,
      merged_by: null,
      closed_at: null,
      head: renderPullRequestSide(example.head as Record<string, unknown>, pullRequest.head, repository),
      base: renderPullRequestSide(example.base as Record<string, unknown>, pullRequest.base, repository),
    },
  };
};

const getCollaboratorPermission: OperationHandler = (context) => {
  const repository = repositoryOf(context);
  const username = String(context.params.username);
  const permission = context.state.permission(repository, username);
  const at = (level: number): boolean => ['none', 'read', 'write', 'admin'].indexOf(permission) >= level;
  return {
    status: 200,
    body: {
      permission,
      role_name: permission,
      user: {
        ...renderAccount({ login: username }),
        role_name: permission,
        permissions: { admin: at(3), maintain: at(3), push: at(2), triage: at(2), pull: at(1) },
      },
    },
  };
};

const compareCommits: OperationHandler = (context) => {
  const repository = repositoryOf(context);
  const [base = '', head = ''] = String(context.params.basehead).split(/\.{2,3}/);
  const mergeBase = context.state.mergeBase(repository, base, head);
  if (mergeBase === undefined) return notFound();
  const example = context.route.example() as Record<string, unknown>;
  const template = example.base_commit as Record<string, unknown>;
  const headHistory = context.state.history(repository, head) ?? [];
  const baseHistory = context.state.history(repository, base) ?? [];
  const aheadBy = Math.max(
    headHistory.findIndex((commit) => commit.sha === mergeBase),
    0,
  );
  const behindBy = Math.max(
    baseHistory.findIndex((commit) => commit.sha === mergeBase),
    0,
  );
  const commitOf = (history: CommitInit[], sha: string): Record<string, unknown> => {
    const index = history.findIndex((commit) => commit.sha === sha);
    return renderCommit(template, repository, history[index] ?? { sha }, history[index + 1]?.sha);
  };
  const apiCompare = `https://api.github.com/repos/${repository.fullName}/compare/${base}...${head}`;
  const htmlCompare = `https://github.com/${repository.fullName}/compare/${base}...${head}`;
  return {
    status: 200,
    body: {
      ...example,
      url: apiCompare,
      html_url: htmlCompare,
      permalink_url: htmlCompare,
      diff_url: `${htmlCompare}.diff`,
      patch_url: `${htmlCompare}.patch`,
      base_commit: commitOf(baseHistory, baseHistory[0]?.sha ?? base),
      merge_base_commit: commitOf(baseHistory, mergeBase),
      status:
        aheadBy === 0 ? (behindBy === 0 ? 'identical' : 'behind') : behindBy === 0 ? 'ahead' : 'diverged',
      ahead_by: aheadBy,
      behind_by: behindBy,
      total_commits: aheadBy,
      commits: headHistory
        .slice(0, aheadBy)
        .reverse()
        .map((commit) => commitOf(headHistory, commit.sha)),
      files: [],
    },
  };
};

const listCommits: OperationHandler = (context: HandlerContext) => {
  const repository = repositoryOf(context);
  const ref = typeof context.query.sha === 'string' ? context.query.sha : repository.defaultBranch;
  const history = context.state.history(repository, ref);
  if (!history) return notFound();
  const [template = {}] = context.route.example() as Array<Record<string, unknown>>;
  const page = paginate(context, history);
  return {
    status: 200,
    headers: page.headers,
    body: page.items.map((commit) =>
      renderCommit(template, repository, commit, history[history.indexOf(commit) + 1]?.sha),
    ),
  };
};

/** Reading a repository: its metadata, files, pull requests, permissions and history. */
export const repositoryHandlers: Record<string, OperationHandler> = {
  'repos/get': getRepository,
  'repos/get-content': getContent,
  'pulls/get': getPullRequest,
  'repos/get-collaborator-permission-level': getCollaboratorPermission,
  'repos/compare-commits-with-basehead': compareCommits,
  'repos/list-commits': listCommits,
};
