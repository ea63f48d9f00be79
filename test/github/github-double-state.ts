import type {
  CommitInit,
  DoubleCheckRun,
  DoubleComment,
  DoubleInstallation,
  DoubleReaction,
  DoubleRepository,
  InstallationPermissions,
  IssuedToken,
  PermissionLevel,
  RepositoryInit,
} from './github-double-records.js';
import { githubTime, type Actor, type PullRequestInit } from './github-shapes.js';

/** The permissions an installation has unless a test says otherwise: what app.yml asks for. */
export const DEFAULT_INSTALLATION_PERMISSIONS: InstallationPermissions = {
  checks: 'write',
  contents: 'read',
  issues: 'write',
  pull_requests: 'write',
  metadata: 'read',
};

// Ids above 2^32, as GitHub's check-run and comment ids are: code storing them in 32-bit
// integers fails here rather than in production.
const FIRST_IDS = {
  installation: 2_200_000_000,
  repository: 1_000_000_000,
  checkRun: 5_000_000_000,
  comment: 4_300_000_000,
  reaction: 300_000_000,
  token: 1,
};

const key = (...parts: Array<string | number>): string => parts.join('\u0000');

/** Everything the double remembers between requests, and the setters tests call. */
export class GitHubDoubleState {
  readonly installations = new Map<number, DoubleInstallation>();
  readonly tokens = new Map<string, IssuedToken>();
  private readonly repositories = new Map<string, DoubleRepository>();
  private readonly files = new Map<string, Buffer>();
  private readonly pullRequests = new Map<string, PullRequestInit>();
  private readonly permissions = new Map<string, PermissionLevel>();
  private readonly mergeBases = new Map<string, string>();
  private readonly histories = new Map<number, Array<{ branch?: string; commits: CommitInit[] }>>();
  private readonly commentsById = new Map<number, DoubleComment>();
  private readonly checkRunsById = new Map<number, DoubleCheckRun>();
  private readonly reactionList: DoubleReaction[] = [];
  private readonly ids = { ...FIRST_IDS };

  nextId(kind: keyof typeof FIRST_IDS): number {
    return this.ids[kind]++;
  }

  addInstallation(init: {
    id?: number;
    account: Actor;
    permissions?: InstallationPermissions;
  }): DoubleInstallation {
    const installation: DoubleInstallation = {
      id: init.id ?? this.nextId('installation'),
      account: { type: 'Organization', ...init.account },
      permissions: init.permissions ?? { ...DEFAULT_INSTALLATION_PERMISSIONS },
    };
    this.installations.set(installation.id, installation);
    return installation;
  }

  addRepository(init: RepositoryInit): DoubleRepository {
    const installation =
      (init.installationId !== undefined && this.installations.get(init.installationId)) ||
      (init.installationId === undefined &&
        [...this.installations.values()].find(
          (candidate) => candidate.account.login.toLowerCase() === init.owner.toLowerCase(),
        )) ||
      this.addInstallation({ id: init.installationId, account: { login: init.owner } });
    const repository: DoubleRepository = {
      owner: init.owner,
      name: init.name,
      fullName: `${init.owner}/${init.name}`,
      id: init.id ?? this.nextId('repository'),
      defaultBranch: init.defaultBranch ?? 'main',
      installationId: installation.id,
      private: init.private ?? false,
      ...(init.cloneUrl !== undefined && { cloneUrl: init.cloneUrl }),
    };
    this.repositories.set(repository.fullName.toLowerCase(), repository);
    return repository;
  }

  installationRepositories(installationId: number): DoubleRepository[] {
    return [...this.repositories.values()].filter(
      (repository) => repository.installationId === installationId,
    );
  }

  /** The repository named `owner/name` (GitHub's names are case-insensitive). */
  repository(fullName: string): DoubleRepository | undefined {
    return this.repositories.get(fullName.toLowerCase());
  }

  repositoryById(id: number): DoubleRepository | undefined {
    return [...this.repositories.values()].find((repository) => repository.id === id);
  }

  /** The repository, or an error naming what the test forgot. */
  requireRepository(fullName: string): DoubleRepository {
    const repository = this.repository(fullName);
    if (!repository)
      throw new Error(`The GitHub double has no repository "${fullName}"; call addRepository first`);
    return repository;
  }

  setFile(repo: string, ref: string, path: string, content: string | Buffer): void {
    const repository = this.requireRepository(repo);
    this.files.set(key(repository.id, ref, path.replace(/^\/+/, '')), Buffer.from(content));
  }

  file(repository: DoubleRepository, ref: string, path: string): Buffer | undefined {
    return this.files.get(key(repository.id, ref, path.replace(/^\/+/, '')));
  }

  setPullRequest(repo: string, pullRequest: PullRequestInit): void {
    const repository = this.requireRepository(repo);
    this.pullRequests.set(key(repository.id, pullRequest.number), structuredClone(pullRequest));
  }

  pullRequest(repository: DoubleRepository, number: number): PullRequestInit | undefined {
    return this.pullRequests.get(key(repository.id, number));
  }

  pullRequestsWithHead(repository: DoubleRepository, sha: string): PullRequestInit[] {
    return [...this.pullRequests.entries()]
      .filter(([prKey, pr]) => prKey.startsWith(key(repository.id, '')) && pr.head.sha === sha)
      .map(([, pr]) => pr);
  }

  setPermission(repo: string, user: string, level: PermissionLevel): void {
    this.permissions.set(key(this.requireRepository(repo).id, user.toLowerCase()), level);
  }

  /** A user's permission; one never set is `read` on a public repository and `none` on a private one. */
  permission(repository: DoubleRepository, user: string): PermissionLevel {
    return (
      this.permissions.get(key(repository.id, user.toLowerCase())) ?? (repository.private ? 'none' : 'read')
    );
  }

  setMergeBase(repo: string, base: string, head: string, mergeBaseSha: string): void {
    this.mergeBases.set(key(this.requireRepository(repo).id, base, head), mergeBaseSha);
  }

  /** The merge base set for `base...head`, else the first of head's ancestors that base also has. */
  mergeBase(repository: DoubleRepository, base: string, head: string): string | undefined {
    const set = this.mergeBases.get(key(repository.id, base, head));
    if (set !== undefined) return set;
    const baseAncestors = new Set(this.history(repository, base)?.map((commit) => commit.sha));
    return this.history(repository, head)?.find((commit) => baseAncestors.has(commit.sha))?.sha;
  }

  setCommits(repo: string, commits: Array<string | CommitInit>, options: { branch?: string } = {}): void {
    const repository = this.requireRepository(repo);
    const list = commits.map((commit) => (typeof commit === 'string' ? { sha: commit } : commit));
    const histories = this.histories.get(repository.id) ?? [];
    histories.unshift({ ...options, commits: list });
    this.histories.set(repository.id, histories);
  }

  /** The commits from `ref` (a SHA or a branch given to `setCommits`) back, newest first. */
  history(repository: DoubleRepository, ref: string): CommitInit[] | undefined {
    for (const { branch, commits } of this.histories.get(repository.id) ?? []) {
      if (branch === ref) return commits;
      const index = commits.findIndex((commit) => commit.sha === ref);
      if (index >= 0) return commits.slice(index);
    }
    return undefined;
  }

  addComment(repository: DoubleRepository, issueNumber: number, body: string, user: Actor): DoubleComment {
    const now = githubTime(new Date());
    const comment: DoubleComment = {
      id: this.nextId('comment'),
      repository: repository.fullName,
      issueNumber,
      body,
      user,
      createdAt: now,
      updatedAt: now,
      previousBodies: [],
    };
    this.commentsById.set(comment.id, comment);
    return comment;
  }

  comment(repository: DoubleRepository, id: number): DoubleComment | undefined {
    const comment = this.commentsById.get(id);
    return comment?.repository === repository.fullName ? comment : undefined;
  }

  comments(repository: DoubleRepository, issueNumber: number): DoubleComment[] {
    return [...this.commentsById.values()].filter(
      (comment) => comment.repository === repository.fullName && comment.issueNumber === issueNumber,
    );
  }

  addReaction(reaction: Omit<DoubleReaction, 'id'>): { reaction: DoubleReaction; created: boolean } {
    const existing = this.reactionList.find(
      (candidate) =>
        candidate.repository === reaction.repository &&
        candidate.commentId === reaction.commentId &&
        candidate.content === reaction.content &&
        candidate.user.login === reaction.user.login,
    );
    if (existing) return { reaction: existing, created: false };
    const created = { id: this.nextId('reaction'), ...reaction };
    this.reactionList.push(created);
    return { reaction: created, created: true };
  }

  reactions(repository: DoubleRepository, commentId?: number): DoubleReaction[] {
    return this.reactionList.filter(
      (reaction) =>
        reaction.repository === repository.fullName &&
        (commentId === undefined || reaction.commentId === commentId),
    );
  }

  saveCheckRun(checkRun: DoubleCheckRun): void {
    this.checkRunsById.set(checkRun.id, checkRun);
  }

  checkRun(repository: DoubleRepository, id: number): DoubleCheckRun | undefined {
    const checkRun = this.checkRunsById.get(id);
    return checkRun?.repository === repository.fullName ? checkRun : undefined;
  }

  checkRuns(repository: DoubleRepository): DoubleCheckRun[] {
    return [...this.checkRunsById.values()].filter((checkRun) => checkRun.repository === repository.fullName);
  }
}
