import { Octokit } from '@octokit/rest';
import type { Logger } from 'pino';
import type { Run } from '../../schemas/tables/runs.js';
import { CredentialRefusedError } from '../credential-refused-error.js';
import type { GitCredentials } from '../route-context.js';
import type { GitHubApi } from './github-work.js';
import { permanentGitHubRefusal } from './permanent-github-refusal.js';

/** `AUTHORIZATION: basic base64(x-access-token:<token>)`, as git's http.extraHeader. */
const HEADER = /^AUTHORIZATION: basic ([A-Za-z0-9+/]+={0,2})$/;
const TOKEN = /^[A-Za-z0-9_.-]{1,400}$/;

/**
 * The git credential of a claimed run of a GitHub repository (DESIGN §6): an installation
 * token minted at claim time for that one repository with `contents: read` only, handed to
 * the runner as the `http.extraHeader` its fetch uses, and revoked once the runner says it
 * fetched. The token is never stored, logged or kept: the runner passes the header back,
 * so any replica can revoke it, and one never passed back expires within the hour.
 */
export class InstallationGitCredentials implements GitCredentials {
  constructor(
    /** A client authenticated as the App (its JWT), which mints installation tokens. */
    private readonly appApi: () => Promise<GitHubApi>,
    /** GitHub's REST API, where tokens are revoked. */
    private readonly apiUrl: string,
    private readonly logger: Logger,
    /** What revoking calls GitHub with (fetchWithDeadline). @defaultValue globalThis.fetch */
    private readonly fetch: typeof globalThis.fetch = globalThis.fetch,
  ) {}

  async forRun(run: Run): Promise<string | null> {
    if (run.installationId === null) return null;
    const name = run.repository.slice(run.repository.indexOf('/') + 1);
    const api = await this.appApi();
    const { data } = await api
      .request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: run.installationId,
        repositories: [name],
        permissions: { contents: 'read' },
      })
      .catch((error: unknown) => {
        const refusal = permanentGitHubRefusal(error);
        if (!refusal) throw error;
        throw new CredentialRefusedError(
          `GitHub refused a token to fetch ${run.repository} (HTTP ${refusal.status}${refusal.message ? `: ${refusal.message}` : ''}); is the App still installed on the repository, under that name?`,
          { cause: error },
        );
      });
    this.logger.info(
      { runId: run.id, repository: run.repository, expiresAt: data.expires_at },
      'read-only installation token minted for the fetch',
    );
    return `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${data.token}`).toString('base64')}`;
  }

  async revoke(extraHeader: string): Promise<boolean> {
    const token = tokenOf(extraHeader);
    if (token === null) return false;
    // DELETE /installation/token revokes the token that authenticates it, and only that.
    await new Octokit({ auth: token, baseUrl: this.apiUrl, request: { fetch: this.fetch } }).request(
      'DELETE /installation/token',
    );
    return true;
  }
}

/** The token inside an extraHeader this class made, or null for anything else. */
function tokenOf(extraHeader: string): string | null {
  const encoded = HEADER.exec(extraHeader)?.[1];
  if (encoded === undefined) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  if (!decoded.startsWith('x-access-token:')) return null;
  const token = decoded.slice('x-access-token:'.length);
  return TOKEN.test(token) ? token : null;
}
