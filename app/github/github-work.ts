import type { Octokit } from '@octokit/rest';
import type { Logger } from 'pino';
import type { Database } from '../../store/db/database.js';
import type { KeyedLock } from '../keyed-lock.js';
import type { GitHubAppSettings } from '../control-plane-settings.js';

/** The part of an Octokit client fluksio's GitHub work calls: `request` with a route. */
export type GitHubApi = Pick<Octokit, 'request'>;

/**
 * Tells the GitHub outbox that something it shows on GitHub changed (a run's check run, a
 * notice's check run, a sweep's comment): it bumps the row's render version and enqueues a
 * job that renders from the database and sends. Never rejects.
 */
export interface GitHubNotifications {
  notifyRun(runId: string): Promise<void>;
  notifyNotice(noticeId: string): Promise<void>;
  notifyGroup(groupId: string): Promise<void>;
}

/**
 * What processing a webhook delivery works with (DESIGN §8). Made once by startGitHubApp
 * and passed down; tests make their own, with no Probot in it.
 */
export interface GitHubWork {
  db: Database;
  /**
   * Shared by every control plane process on the database: the events of one pull request
   * are handled one at a time (run-pull-request-head.ts).
   */
  lock: KeyedLock;
  github: GitHubAppSettings;
  /** A client authenticated as an installation (its token minted and cached by Probot). */
  installationApi(installationId: number): Promise<GitHubApi>;
  notifications: GitHubNotifications;
  /** Rung once runs are queued, so waiting runners claim them at once. */
  ringDoorbell(): Promise<void>;
  /** Rung when a run was cancelled, so its runner (its parked watch) and open pages hear at once. */
  ringRunBell(runId: string): Promise<void>;
  /** For the waiting reason a new run shows at once (`Waiting for a runner labelled gpu`). */
  onlineWindowMs: number;
  logger: Logger;
}
