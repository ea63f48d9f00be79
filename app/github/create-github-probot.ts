import type { Logger } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import type { GitHubAppSettings } from '../control-plane-settings.js';
import { fetchWithDeadline } from './fetch-with-deadline.js';

/**
 * The Probot of `fluksio app`: the App's credentials, every GitHub call (the installation
 * token exchange included) to `apiUrl` within `requestTimeoutMs` (fetchWithDeadline), and
 * no throttling or retries of Octokit's own — the delivery worker and the outbox retry,
 * with backoff, and know what is idempotent.
 *
 * The defaults are a function, not an object: Probot constructs its Octokit with a
 * `throttle` object of its own (rate-limit handlers, no `enabled`) that would replace an
 * object default's `throttle` whole and leave throttling on, spacing every write a second
 * (a comment three) apart.
 */
export function createGitHubProbot(settings: GitHubAppSettings, logger: Logger): Probot {
  const fetch = fetchWithDeadline(settings.requestTimeoutMs);
  return new Probot({
    appId: settings.appId,
    privateKey: settings.privateKey,
    secret: settings.webhookSecret,
    log: logger.child({ component: 'probot' }),
    Octokit: ProbotOctokit.defaults((instanceOptions: { request?: object }) => ({
      ...instanceOptions,
      request: { ...instanceOptions.request, fetch },
      baseUrl: settings.apiUrl,
      throttle: { enabled: false },
      retry: { enabled: false },
    })),
  });
}
