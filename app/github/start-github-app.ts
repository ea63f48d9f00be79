import type { Logger } from 'pino';
import { createNodeMiddleware } from 'probot';
import type { Database } from '../../store/db/database.js';
import type { KeyedLock } from '../keyed-lock.js';
import type { GitHubServerParts } from '../build-server.js';
import type { ControlPlaneSettings, GitHubAppSettings } from '../control-plane-settings.js';
import { WEBHOOK_PATH } from '../routes/github-webhook-route.js';
import { createGitHubProbot } from './create-github-probot.js';
import { fetchWithDeadline } from './fetch-with-deadline.js';
import { openDeliveryQueue } from './intake/delivery-queue.js';
import type { GitHubWork } from './github-work.js';
import { InstallationGitCredentials } from './installation-git-credentials.js';
import { GitHubOutbox } from './outbox/outbox.js';
import { startDeliveryWorker } from './intake/start-delivery-worker.js';
import { webhookIntake } from './intake/webhook-intake.js';
import { pageLinkSecret } from '../pages/page-link-secret.js';
import { PageLinkSigner } from '../pages/page-link-signer.js';

/** The GitHub App of a running control plane. */
export interface GitHubApp {
  /** What buildServer mounts and calls: the webhook endpoint, claim-time credentials, run changes. */
  server: GitHubServerParts;
  /** For the sweeper: a run it changed, so its check run follows. */
  onRunChanged(runId: string): void;
  /** Stops the delivery worker, then the outbox, then disconnects their queues. */
  close(): Promise<void>;
}

/**
 * Starts the GitHub App's side of `fluksio app` (DESIGN §8): the Probot whose middleware
 * stores and enqueues verified deliveries, the worker (and its reconciler) that processes
 * them, the outbox that writes check runs and comments, and the installation tokens runs
 * are fetched with. Nothing here contacts GitHub until there is work. A failure part-way
 * closes what was started and rejects.
 */
export async function startGitHubApp({
  db,
  lock,
  workers = true,
  settings,
  github,
  ringDoorbell,
  ringRunBell,
  logger,
}: {
  db: Database;
  /** Shared by every control plane process on the database: deliveries of one pull request take turns. */
  lock: KeyedLock;
  /**
   * Whether this process runs the delivery worker and the outbox's worker; without them it
   * only stores and enqueues deliveries and enqueues outbox jobs (`--role web`). @defaultValue true
   */
  workers?: boolean;
  settings: Pick<
    ControlPlaneSettings,
    'redisUrl' | 'queuePrefix' | 'sweepIntervalMs' | 'onlineWindowMs' | 'pagesSecret' | 'pageLinkTtlMs'
  >;
  github: GitHubAppSettings;
  /** Rung once runs are queued, so waiting runners claim them at once. */
  ringDoorbell(): Promise<void>;
  /** Rung when a run was cancelled, so its runner hears at once. */
  ringRunBell(runId: string): Promise<void>;
  logger: Logger;
}): Promise<GitHubApp> {
  const log = logger.child({ component: 'github' });
  const probot = createGitHubProbot(github, log);
  const closers: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.splice(0).reverse()) {
      await closer().catch((error: unknown) =>
        log.error({ err: error }, 'error while stopping the GitHub App'),
      );
    }
  };
  try {
    const outbox = new GitHubOutbox({
      db,
      redisUrl: settings.redisUrl,
      queuePrefix: settings.queuePrefix,
      github: (installationId) => probot.auth(installationId),
      settings: {
        checkName: github.checkName,
        apiBaseUrlForLinks: github.publicUrl,
        // Keyed as buildServer keys the pages' gate (page-link-secret.ts), so the links open.
        pageLinks: new PageLinkSigner(
          pageLinkSecret({ pagesSecret: settings.pagesSecret, github }).secret,
          settings.pageLinkTtlMs,
        ),
      },
      logger: log,
    });
    closers.push(() => outbox.close());
    if (workers) await outbox.start();

    const queue = openDeliveryQueue({
      redisUrl: settings.redisUrl,
      prefix: settings.queuePrefix,
      logger: log,
    });
    closers.push(() => queue.close());
    const work: GitHubWork = {
      db,
      lock,
      github,
      installationApi: (installationId) => probot.auth(installationId),
      notifications: outbox,
      ringDoorbell,
      ringRunBell,
      onlineWindowMs: settings.onlineWindowMs,
      logger: log,
    };
    if (workers) {
      const worker = await startDeliveryWorker({
        work,
        queue,
        redisUrl: settings.redisUrl,
        prefix: settings.queuePrefix,
        reconcileEveryMs: settings.sweepIntervalMs,
        logger: log,
      });
      closers.push(() => worker.close());
    }

    const webhooks = await createNodeMiddleware(webhookIntake({ db, queue, logger: log }), {
      probot,
      webhooksPath: WEBHOOK_PATH,
    });
    const onRunChanged = (runId: string): void => {
      void outbox.notifyRun(runId);
    };
    return {
      server: {
        webhooks,
        gitCredentials: new InstallationGitCredentials(
          () => probot.auth(),
          github.apiUrl,
          log,
          fetchWithDeadline(github.requestTimeoutMs),
        ),
        onRunChanged,
      },
      onRunChanged,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
