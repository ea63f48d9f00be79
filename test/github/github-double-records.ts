import type { Actor, FixtureRepository } from './github-shapes.js';

/** A collaborator's permission on a repository, as the permission API reports it. */
export type PermissionLevel = 'admin' | 'write' | 'read' | 'none';

/** Installation permissions: `{ checks: 'write', contents: 'read', … }`. */
export type InstallationPermissions = Record<string, 'read' | 'write'>;

/** An installation of the app on an account. */
export interface DoubleInstallation {
  id: number;
  account: Actor;
  permissions: InstallationPermissions;
}

/** A repository the double serves; a {@link FixtureRepository} with every default filled in. */
export interface DoubleRepository extends FixtureRepository {
  fullName: string;
  defaultBranch: string;
  installationId: number;
  private: boolean;
}

/** What `addRepository` needs: a name; everything else has a default. */
export interface RepositoryInit {
  owner: string;
  name: string;
  /** @defaultValue a fresh id */
  id?: number;
  /** @defaultValue `'main'` */
  defaultBranch?: string;
  /** @defaultValue the installation on `owner`, made when there is none */
  installationId?: number;
  /** @defaultValue `false` */
  private?: boolean;
  cloneUrl?: string;
}

/** An installation token the double issued. */
export interface IssuedToken {
  /** The double's own number for it (1, 2, …), which `double.requests` names instead of the token. */
  id: number;
  token: string;
  installationId: number;
  /** The repositories it was restricted to, or `null` for all of the installation's. */
  repositoryIds: number[] | null;
  permissions: InstallationPermissions;
  issuedAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** A check-run annotation as sent. */
export interface DoubleAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column?: number;
  end_column?: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
  raw_details?: string;
}

/** A check run's action button. */
export interface DoubleCheckRunAction {
  label: string;
  description: string;
  identifier: string;
}

/** A check run as the double keeps it: its current state and every request that shaped it. */
export interface DoubleCheckRun {
  id: number;
  repository: string;
  name: string;
  headSha: string;
  externalId: string | null;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  detailsUrl: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  /** Every annotation sent, in order (GitHub appends each request's to the earlier ones). */
  annotations: DoubleAnnotation[];
  actions: DoubleCheckRunAction[];
  /** The create and every update, with their bodies as sent. */
  history: Array<{ method: 'POST' | 'PATCH'; body: Record<string, unknown>; at: Date }>;
}

/** An issue or pull-request comment. */
export interface DoubleComment {
  id: number;
  repository: string;
  issueNumber: number;
  body: string;
  user: Actor;
  createdAt: string;
  updatedAt: string;
  /** The bodies it had before each edit. */
  previousBodies: string[];
}

/** A reaction made on a comment. */
export interface DoubleReaction {
  id: number;
  repository: string;
  commentId: number;
  content: string;
  user: Actor;
}

/** A commit of a history given to `setCommits`. */
export interface CommitInit {
  sha: string;
  /** @defaultValue `Commit <first 7 characters>` */
  message?: string;
  /** The GitHub account its author's email is linked to. @defaultValue the example's user */
  author?: Actor;
  /** The GitHub account its committer's email is linked to. @defaultValue the example's user */
  committer?: Actor;
}

/** A user access token the double issued through the web flow (`ghu_…`). */
export interface UserToken {
  token: string;
  login: string;
  userId: number;
  expiresAt: Date;
  revokedAt: Date | null;
}
