import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserToken } from './github-double-records.js';
import type { Violation } from './github-handler.js';
import { accountId } from './github-shapes.js';

/** The App's OAuth client, as its settings page shows it. */
export interface DoubleOAuthClient {
  clientId: string;
  clientSecret: string;
}

/** A code the authorize page handed to the App's callback, until it is exchanged (once). */
interface PendingCode {
  login: string;
  redirectUri: string;
  expiresAt: number;
}

/** GitHub's documented lifetimes: a code lasts 10 minutes, a user token 8 hours. */
const CODE_TTL_MS = 10 * 60_000;
const USER_TOKEN_TTL_S = 8 * 3600;
const DOCS =
  'https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app';

/**
 * GitHub's web sign-in for the App's OAuth client, which is not part of the REST API (nor of
 * its OpenAPI description), modelled on its documentation: `GET /login/oauth/authorize`
 * (the browser, already signed in to GitHub as {@link signInAs}'s user, is sent back to
 * `redirect_uri` with a one-time `code` and the `state` it came with) and `POST
 * /login/oauth/access_token` (form or JSON `client_id`, `client_secret`, `code`,
 * `redirect_uri`; errors are 200 answers carrying `error`, as GitHub's are). The tokens it
 * issues authenticate `GET /user` and `GET /repos/{owner}/{repo}` for that user.
 */
export class DoubleOAuth {
  readonly client: DoubleOAuthClient = {
    clientId: `Iv23li${randomBytes(7).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
  };
  readonly userTokens = new Map<string, UserToken>();
  private readonly codes = new Map<string, PendingCode>();
  private browserUser: string | null = null;

  /** Who the browser is signed in to GitHub as when the authorize page is opened; null: nobody. */
  signInAs(login: string | null): void {
    this.browserUser = login;
  }

  /** A valid user token, or undefined for an unknown, expired or revoked one. */
  userToken(token: string): UserToken | undefined {
    const found = this.userTokens.get(token);
    return found && found.revokedAt === null && found.expiresAt.getTime() > Date.now() ? found : undefined;
  }

  /** Whether this path is one of the web flow's. */
  handles(path: string): boolean {
    return path === '/login/oauth/authorize' || path === '/login/oauth/access_token';
  }

  /** Answers a web-flow request; a request GitHub would refuse is also pushed onto `violations`. */
  answer(
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
    body: string,
    violations: Violation[],
  ): number {
    const refuse = (status: number, message: string): number => {
      violations.push({
        kind: 'invalid-request',
        method: request.method ?? 'GET',
        path: url.pathname,
        message,
      });
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(message);
      return status;
    };
    if (url.pathname === '/login/oauth/authorize') {
      if (request.method !== 'GET') return refuse(404, `${request.method} ${url.pathname} is not a page`);
      const query = url.searchParams;
      if (query.get('client_id') !== this.client.clientId) return refuse(404, 'client_id names no App');
      const redirect = query.get('redirect_uri');
      let target: URL;
      try {
        target = new URL(redirect ?? '');
      } catch {
        return refuse(400, 'redirect_uri must be the absolute callback URL');
      }
      // The browser would stop at GitHub's sign-in page: a test that forgot signInAs is wrong.
      if (this.browserUser === null) return refuse(401, 'Nobody is signed in to the double (call signInAs)');
      const code = randomBytes(10).toString('hex');
      this.codes.set(code, {
        login: this.browserUser,
        redirectUri: target.href,
        expiresAt: Date.now() + CODE_TTL_MS,
      });
      target.searchParams.set('code', code);
      const state = query.get('state');
      if (state !== null) target.searchParams.set('state', state);
      response.writeHead(302, { location: target.href }).end();
      return 302;
    }
    if (request.method !== 'POST') return refuse(404, `${request.method} ${url.pathname} is not an endpoint`);
    let fields: Record<string, unknown>;
    const type = request.headers['content-type'] ?? '';
    try {
      fields = type.includes('json')
        ? (JSON.parse(body || '{}') as Record<string, unknown>)
        : Object.fromEntries(new URLSearchParams(body));
    } catch {
      return refuse(400, 'Problems parsing JSON');
    }
    if (!String(request.headers.accept ?? '').includes('application/json'))
      return refuse(406, 'fluksio must ask for JSON (Accept: application/json)');
    const answer = (data: Record<string, unknown>): number => {
      response
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(data));
      return 200;
    };
    const error = (name: string, description: string) =>
      answer({ error: name, error_description: description, error_uri: DOCS });
    if (fields.client_id !== this.client.clientId || fields.client_secret !== this.client.clientSecret)
      return error(
        'incorrect_client_credentials',
        'The client_id and/or client_secret passed are incorrect.',
      );
    const code = typeof fields.code === 'string' ? this.codes.get(fields.code) : undefined;
    if (!code || code.expiresAt <= Date.now())
      return error('bad_verification_code', 'The code passed is incorrect or expired.');
    this.codes.delete(String(fields.code));
    if (fields.redirect_uri !== undefined && fields.redirect_uri !== code.redirectUri)
      return error(
        'redirect_uri_mismatch',
        'The redirect_uri MUST match the registered callback URL for this application.',
      );
    const token = `ghu_${randomBytes(18).toString('base64url')}`;
    this.userTokens.set(token, {
      token,
      login: code.login,
      userId: accountId({ login: code.login }),
      expiresAt: new Date(Date.now() + USER_TOKEN_TTL_S * 1000),
      revokedAt: null,
    });
    return answer({
      access_token: token,
      expires_in: USER_TOKEN_TTL_S,
      refresh_token: `ghr_${randomBytes(30).toString('base64url')}`,
      refresh_token_expires_in: 15_897_600,
      token_type: 'bearer',
      scope: '',
    });
  }
}
