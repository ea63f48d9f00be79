import { pino } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import type { GitHubDouble } from './github-double.js';
import type { TestAppCredentials } from './test-app-credentials.js';

/**
 * A Probot whose every GitHub call, the installation-token exchange included, goes to the
 * double; throttling and retries are off so a test sees each request and each injected fault.
 *
 * The defaults are a function, not an object: Probot constructs its Octokit with a `throttle`
 * object of its own (its rate-limit handlers, no `enabled`), which replaces an object default's
 * `throttle` whole, so `ProbotOctokit.defaults({ throttle: { enabled: false } })` leaves
 * throttling on — writes spaced a second apart, a primary rate limit retried after its reset.
 */
export function probotForDouble(
  double: GitHubDouble,
  credentials: TestAppCredentials = double.credentials,
): Probot {
  return new Probot({
    appId: credentials.appId,
    privateKey: credentials.privateKey,
    secret: credentials.webhookSecret,
    log: pino({ level: 'silent' }),
    Octokit: ProbotOctokit.defaults((instanceOptions: object) => ({
      ...instanceOptions,
      baseUrl: double.url,
      throttle: { enabled: false },
      retry: { enabled: false },
    })),
  });
}
