import { createHash } from 'node:crypto';

/**
 * A repository as the GitHub double and the webhook fixtures both describe it; what
 * `GitHubDouble.addRepository` returns is one, so a payload and the double's answers agree.
 */
export interface FixtureRepository {
  owner: string;
  name: string;
  /** GitHub's numeric repository id. */
  id: number;
  /** @defaultValue `'main'` */
  defaultBranch?: string;
  /** The installation a payload names when the builder is given none. */
  installationId?: number;
  /** @defaultValue `false` */
  private?: boolean;
  /** The repository's `clone_url`. @defaultValue `https://github.com/<owner>/<name>.git` */
  cloneUrl?: string;
}

/** A GitHub account: a comment's author, a webhook's sender, a pull request's user. */
export interface Actor {
  login: string;
  /** @defaultValue a stable number derived from the login ({@link accountId}) */
  id?: number;
  /** @defaultValue `'User'` */
  type?: 'User' | 'Bot' | 'Organization';
}

/** One side of a pull request. */
export interface PullRequestSide {
  sha: string;
  /** The branch name, without `refs/heads/`. */
  ref: string;
  /**
   * The id of the repository the branch lives in: omitted for the pull request's own
   * repository, another id for a fork, `null` when the fork was deleted.
   */
  repoId?: number | null;
  /** The fork's `owner/name`. @defaultValue `contributor/<name of the base repository>` */
  repoFullName?: string;
}

/** A pull request, as `GitHubDouble.setPullRequest` keeps it and `pullRequestPayload` sends it. */
export interface PullRequestInit {
  number: number;
  head: PullRequestSide;
  base: PullRequestSide;
  /** @defaultValue `'open'` */
  state?: 'open' | 'closed';
  /** @defaultValue `{ login: 'contributor' }` */
  user?: Actor;
  /** @defaultValue `Pull request #<number>` */
  title?: string;
}

/** The account every fixture and the double use when a test names none. */
export const DEFAULT_ACTOR: Actor = { login: 'octocat' };

/** GitHub's timestamps: ISO 8601 to the second. */
export function githubTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The user id of a login when a test gives none: stable, so payloads and API answers agree. */
export function accountId(actor: Actor): number {
  if (actor.id !== undefined) return actor.id;
  const digest = createHash('sha256').update(actor.login.toLowerCase()).digest();
  return 10_000_000 + (digest.readUInt32BE(0) % 90_000_000);
}

/** `{ login, id, type, … }` as GitHub renders an account in payloads and API answers. */
export function renderAccount(actor: Actor): Record<string, unknown> {
  const id = accountId(actor);
  const login = actor.login;
  // GitHub percent-encodes a bot's brackets in its URLs: /users/fluksio%5Bbot%5D.
  const path = encodeURIComponent(login);
  return {
    login,
    id,
    node_id: `U_${id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    gravatar_id: '',
    url: `https://api.github.com/users/${path}`,
    html_url: `https://github.com/${path}`,
    followers_url: `https://api.github.com/users/${path}/followers`,
    following_url: `https://api.github.com/users/${path}/following{/other_user}`,
    gists_url: `https://api.github.com/users/${path}/gists{/gist_id}`,
    starred_url: `https://api.github.com/users/${path}/starred{/owner}{/repo}`,
    subscriptions_url: `https://api.github.com/users/${path}/subscriptions`,
    organizations_url: `https://api.github.com/users/${path}/orgs`,
    repos_url: `https://api.github.com/users/${path}/repos`,
    events_url: `https://api.github.com/users/${path}/events{/privacy}`,
    received_events_url: `https://api.github.com/users/${path}/received_events`,
    type: actor.type ?? 'User',
    site_admin: false,
  };
}

/** Where a pull request side's branch lives: the base repository, a fork, or nowhere (deleted). */
export function sideRepository(side: PullRequestSide, base: FixtureRepository): FixtureRepository | null {
  if (side.repoId === null) return null;
  if (side.repoId === undefined || side.repoId === base.id) return base;
  const [owner = 'contributor', name = base.name] = (side.repoFullName ?? `contributor/${base.name}`).split(
    '/',
  );
  return { owner, name, id: side.repoId, defaultBranch: 'main' };
}

/**
 * A repository object (payload or API answer) for `repo`, made from one of GitHub's examples so it
 * keeps every field GitHub sends: ids, names, the owner and every URL naming the old repository
 * are rewritten.
 */
export function renderRepository(
  template: Record<string, unknown>,
  repo: FixtureRepository,
): Record<string, unknown> {
  const fullName = `${repo.owner}/${repo.name}`;
  const oldFullName = String(template.full_name);
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) {
    copy[key] =
      typeof value === 'string' && key.endsWith('url') ? value.split(oldFullName).join(fullName) : value;
  }
  const oldOwner = (template.owner ?? {}) as Record<string, unknown>;
  const owner: Record<string, unknown> = { ...oldOwner, ...renderAccount({ login: repo.owner }) };
  if ('name' in oldOwner) owner.name = repo.owner;
  const defaultBranch = repo.defaultBranch ?? 'main';
  return {
    ...copy,
    id: repo.id,
    node_id: `R_${repo.id}`,
    name: repo.name,
    full_name: fullName,
    private: repo.private ?? false,
    ...('visibility' in template && { visibility: repo.private ? 'private' : 'public' }),
    owner,
    html_url: `https://github.com/${fullName}`,
    url: `https://api.github.com/repos/${fullName}`,
    clone_url: repo.cloneUrl ?? `https://github.com/${fullName}.git`,
    git_url: `git://github.com/${fullName}.git`,
    ssh_url: `git@github.com:${fullName}.git`,
    svn_url: `https://github.com/${fullName}`,
    default_branch: defaultBranch,
    ...('master_branch' in template && { master_branch: defaultBranch }),
    fork: false,
  };
}

/** A pull request's id when a test gives none: stable per repository and number. */
export function pullRequestId(repository: FixtureRepository, number: number): number {
  return repository.id * 10_000 + number;
}

/** `head` or `base` of a pull request (payload or API answer), from the example's. */
export function renderPullRequestSide(
  template: Record<string, unknown>,
  side: PullRequestSide,
  repository: FixtureRepository,
): Record<string, unknown> {
  const where = sideRepository(side, repository);
  return {
    ...template,
    label: `${where?.owner ?? 'ghost'}:${side.ref}`,
    ref: side.ref,
    sha: side.sha,
    user: renderAccount({ login: where?.owner ?? 'ghost' }),
    repo: where && {
      ...renderRepository(template.repo as Record<string, unknown>, where),
      fork: where.id !== repository.id,
    },
  };
}

/** The short form of a pull request that check runs and check suites carry. */
export function renderMinimalPullRequest(
  pullRequest: PullRequestInit,
  repository: FixtureRepository,
): Record<string, unknown> {
  const apiUrl = `https://api.github.com/repos/${repository.owner}/${repository.name}`;
  const side = (ref: string, sha: string) => ({
    ref,
    sha,
    repo: { id: repository.id, url: apiUrl, name: repository.name },
  });
  return {
    url: `${apiUrl}/pulls/${pullRequest.number}`,
    id: pullRequestId(repository, pullRequest.number),
    number: pullRequest.number,
    head: side(pullRequest.head.ref, pullRequest.head.sha),
    base: side(pullRequest.base.ref, pullRequest.base.sha),
  };
}

/**
 * Rewrites every URL in an example (any string under a key ending in `url` or `href`) by
 * replacing each `[from, to]` pair, so a payload or answer names the test's repository and commit.
 */
export function retarget<T>(value: T, replacements: Array<[string, string]>, keyName = ''): T {
  if (Array.isArray(value)) return value.map((item) => retarget(item, replacements)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, retarget(item, replacements, key)]),
    ) as T;
  }
  if (typeof value === 'string' && (keyName.endsWith('url') || keyName === 'href')) {
    return replacements.reduce((text, [from, to]) => text.split(from).join(to), value as string) as T;
  }
  return value;
}

/** The id of the check suite of a commit: derived from the SHA, so runs on a commit share it. */
export function checkSuiteId(headSha: string): number {
  return 7_000_000_000 + Number.parseInt(headSha.slice(0, 7), 16);
}

/** The URLs of a pull request, as its API answer and its payloads carry them. */
export function pullRequestUrls(
  repository: FixtureRepository,
  number: number,
  headSha: string,
): Record<string, unknown> {
  const fullName = `${repository.owner}/${repository.name}`;
  const api = `https://api.github.com/repos/${fullName}`;
  const html = `https://github.com/${fullName}/pull/${number}`;
  return {
    url: `${api}/pulls/${number}`,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${api}/issues/${number}`,
    commits_url: `${api}/pulls/${number}/commits`,
    review_comments_url: `${api}/pulls/${number}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${number}/comments`,
    statuses_url: `${api}/statuses/${headSha}`,
    _links: {
      self: { href: `${api}/pulls/${number}` },
      html: { href: html },
      issue: { href: `${api}/issues/${number}` },
      comments: { href: `${api}/issues/${number}/comments` },
      review_comments: { href: `${api}/pulls/${number}/comments` },
      review_comment: { href: `${api}/pulls/comments{/number}` },
      commits: { href: `${api}/pulls/${number}/commits` },
      statuses: { href: `${api}/statuses/${headSha}` },
    },
  };
}
