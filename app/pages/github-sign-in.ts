import { exchangeWebFlowCode, getWebFlowAuthorizationUrl } from '@octokit/oauth-methods';
import { Octokit } from '@octokit/rest';
import { isGitHubRepositoryName } from './github-repository-name.js';

/** Who signed in: GitHub's user id (stable across renames) and login (shown on the pages). */
export interface GitHubUser {
  id: number;
  login: string;
}

/** What a user's token says about a repository: readable, not (or unknown), or the token is dead. */
export type RepositoryAccess = 'read' | 'none' | 'signed-out';

/** Octokit's request log stays quiet: a 404 is the answer to "may they read it?", not a failure. */
const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The run pages' sign-in with GitHub through the GitHub App's OAuth client (the web
 * application flow, @octokit/oauth-methods): the authorize URL, exchanging the code for the
 * user's token, who the user is, and whether the user can read a repository (`GET
 * /repos/{owner}/{repo}` with the user's token answers 200 only for a repository both the
 * user and the App's installation can see). `apiUrl` is GitHub's REST API (GitHub
 * Enterprise or a test double); the web flow's host is derived from it as Octokit does
 * (`api.github.com` → `github.com`, `/api/v3` dropped).
 */
export class GitHubSignIn {
  private readonly api: Octokit;

  constructor(
    private readonly options: {
      clientId: string;
      clientSecret: string;
      apiUrl: string;
      /** `<public URL>/auth/github/callback`: where GitHub sends the browser back. */
      callbackUrl: string;
      /** What every call to GitHub is made with (a deadline's). @defaultValue globalThis.fetch */
      fetch?: typeof globalThis.fetch;
    },
  ) {
    this.api = new Octokit({
      baseUrl: options.apiUrl,
      log: QUIET,
      request: { fetch: options.fetch ?? globalThis.fetch },
    });
  }

  /** GitHub's page that asks the user to authorize the App, returning to the callback with `state`. */
  authorizeUrl(state: string): string {
    return getWebFlowAuthorizationUrl({
      clientType: 'github-app',
      clientId: this.options.clientId,
      redirectUrl: this.options.callbackUrl,
      state,
      request: this.api.request,
    }).url;
  }

  /** The user's token for a callback's `code`, and when it expires (null: never, for Apps that opt out). */
  async exchange(code: string): Promise<{ token: string; expiresAt: Date | null }> {
    const { authentication } = await exchangeWebFlowCode({
      clientType: 'github-app',
      clientId: this.options.clientId,
      clientSecret: this.options.clientSecret,
      code,
      redirectUrl: this.options.callbackUrl,
      request: this.api.request,
    });
    return {
      token: authentication.token,
      expiresAt: 'expiresAt' in authentication ? new Date(authentication.expiresAt) : null,
    };
  }

  /** The user a token belongs to. */
  async user(token: string): Promise<GitHubUser> {
    const { data } = await this.api.request('GET /user', { headers: { authorization: `token ${token}` } });
    return { id: Number(data.id), login: data.login };
  }

  /**
   * Whether the token's user can read `repository` (`owner/name`). A repository GitHub
   * cannot hold (another host's or a local path's, `scm/ml/model`) is nobody's to read by
   * a GitHub sign-in: asking about its first two segments would ask about another
   * repository, one anybody may own.
   */
  async access(token: string, repository: string): Promise<RepositoryAccess> {
    if (!isGitHubRepositoryName(repository)) return 'none';
    const [owner = '', repo = ''] = repository.split('/');
    try {
      await this.api.request('GET /repos/{owner}/{repo}', {
        owner,
        repo,
        headers: { authorization: `token ${token}` },
      });
      return 'read';
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (status === 401) return 'signed-out';
      if (status === 403 || status === 404) return 'none';
      throw error;
    }
  }
}
