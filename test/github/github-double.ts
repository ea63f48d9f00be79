import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { answerGitHubRequest, type DoubleServices, type RequestFindings } from './answer-github-request.js';
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
  UserToken,
} from './github-double-records.js';
import { GitHubDoubleState } from './github-double-state.js';
import { FaultQueue, type InjectedFault, type RequestMatcher } from './github-faults.js';
import {
  answerGitRequest,
  GIT_PATH_PREFIX,
  servedRepository,
  type GitFindings,
  type ServedRepository,
} from './git-http-backend.js';
import { refusal, type DoubleApp, type HandlerResult, type Violation } from './github-handler.js';
import { loadGitHubRoutes } from './github-routes.js';
import { localhostCertificate } from './localhost-certificate.js';
import { DoubleOAuth, type DoubleOAuthClient } from './oauth-handlers.js';
import { DEFAULT_ACTOR, type Actor, type PullRequestInit } from './github-shapes.js';
import { sharedTestAppCredentials, type TestAppCredentials } from './test-app-credentials.js';

export { testAppCredentials, type TestAppCredentials } from './test-app-credentials.js';
export {
  primaryRateLimit,
  secondaryRateLimit,
  type InjectedFault,
  type RequestMatcher,
} from './github-faults.js';
export type * from './github-double-records.js';
export type { Actor, FixtureRepository, PullRequestInit, PullRequestSide } from './github-shapes.js';
export type { Violation, ViolationKind } from './github-handler.js';
export type { DoubleOAuthClient } from './oauth-handlers.js';

/** How to start a double. */
export interface GitHubDoubleOptions {
  /**
   * The app whose JWTs `/app` endpoints accept.
   * @defaultValue credentials shared by every double in the test process (see `sharedTestAppCredentials`)
   */
  credentials?: TestAppCredentials;
  /** The app's slug; it comments as `<slug>[bot]`. @defaultValue `'fluksio'` */
  appSlug?: string;
  /**
   * Also listen over HTTPS (a self-signed certificate for 127.0.0.1, {@link GitHubDouble.caFile}),
   * and give that address as the clone URL: the runner fetches from `https://` only.
   * @defaultValue `false`
   */
  https?: boolean;
}

/** A request the double received. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The parsed JSON body, or `undefined` without one (and for git requests). */
  body: unknown;
  /** Lower-cased headers, without `authorization`. */
  headers: Record<string, string>;
  /**
   * The matched route's template and operation, `null` for an unknown route; for git's smart
   * HTTP under `/git/`, `'git'` and the service (`git-upload-pack`, `git-receive-pack`).
   */
  route: string | null;
  operationId: string | null;
  /** The status answered (for a dropped response: the one that was never sent); 0 while in flight. */
  status: number;
  /** The installation whose token authenticated it. */
  installationId?: number;
  /** The id ({@link IssuedToken.id}) of the installation token that authenticated it; never the token. */
  tokenId?: number;
  /** For a git request (route `'git'`): the `owner/name` it asked for. */
  repository?: string;
  /** `'injected'`: answered by `failNext`; `'dropped'`: applied, then the socket was destroyed. */
  fault?: 'injected' | 'dropped';
}

/** A running GitHub double: a real HTTP server speaking the subset of GitHub's REST API fluksio calls. */
export interface GitHubDouble {
  /** The base URL to give Octokit (`baseUrl`) or `GITHUB_API_URL`. */
  readonly url: string;
  /**
   * With `https: true`, the same double over HTTPS (`https://127.0.0.1:<port>`), else `null`.
   * Clone URLs use it when there is one.
   */
  readonly httpsUrl: string | null;
  /** With `https: true`, the certificate to trust (`GIT_SSL_CAINFO` for git), else `null`. */
  readonly caFile: string | null;
  readonly credentials: TestAppCredentials;
  readonly app: DoubleApp;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Every request GitHub would have refused; must stay empty. */
  readonly violations: Violation[];
  /** The OpenAPI description the routes come from. */
  readonly source: { package: string; version: string };
  /** Installs the app on an account (an organization unless `account.type` says otherwise). */
  addInstallation(init: {
    id?: number;
    account: Actor;
    permissions?: InstallationPermissions;
  }): DoubleInstallation;
  /** Adds a repository, in the installation on its owner (made when there is none). */
  addRepository(init: RepositoryInit): DoubleRepository;
  /** A file the contents API serves at exactly `ref` (a SHA or a branch name, as the app asks). */
  setFile(repo: string, ref: string, path: string, content: string | Buffer): void;
  /** A pull request the pulls API serves; check runs on its head list it when it is not a fork. */
  setPullRequest(repo: string, pullRequest: PullRequestInit): void;
  /** A user's permission; without one, `read` on a public repository, `none` on a private one. */
  setPermission(repo: string, user: string, level: PermissionLevel): void;
  /** The merge base compare answers for `base...head`; without one it is computed from `setCommits` histories. */
  setMergeBase(repo: string, base: string, head: string, mergeBaseSha: string): void;
  /**
   * A first-parent history, newest first: `GET /commits?sha=` lists from any of its SHAs (or
   * from `branch`, naming its newest), and `commits/{branch}/check-runs` resolves the branch.
   */
  setCommits(repo: string, commits: Array<string | CommitInit>, options?: { branch?: string }): void;
  /** A comment made by someone else (default `octocat`), e.g. an earlier sweep comment. */
  addComment(repo: string, issueNumber: number, comment: { body: string; user?: Actor }): DoubleComment;
  /** The repository's check runs, each with its current state and every request that shaped it. */
  checkRuns(repo: string): DoubleCheckRun[];
  /** The comments on an issue or pull request, oldest first. */
  comments(repo: string, issueNumber: number): DoubleComment[];
  /** The reactions made, on one comment or on all of the repository's. */
  reactions(repo: string, commentId?: number): DoubleReaction[];
  /** Every installation token issued, revoked ones included. */
  issuedTokens(): IssuedToken[];
  /**
   * Serves the repository `owner/name` (added with `addRepository`) over git's smart HTTP from
   * `dir` (a work tree or a bare repository), at {@link cloneUrl}, which becomes the repository's
   * `clone_url` in API answers and in payloads built from the repository afterwards. Fetches need
   * `Authorization: Basic base64("x-access-token:<token>")` with an installation token the double
   * issued, not revoked, that can read the repository (see `answerGitRequest`); pushes are
   * refused. The repository is read at each request, so commits made in `dir` later are served.
   * Returns the clone URL.
   */
  serveRepository(repo: string, dir: string): string;
  /**
   * `<url>/git/<owner>/<name>.git`: where git fetches the repository from (over HTTPS when the
   * double was started with `https: true`).
   */
  cloneUrl(repo: string): string;
  /**
   * The git requests for the repository in arrival order (route `'git'`), refused ones and
   * attempted pushes included, each with the id of the token used (`tokenId`), never the token.
   * A fetch is a `GET …/info/refs` followed by one or more `POST …/git-upload-pack`.
   */
  gitFetches(repo: string): RecordedRequest[];
  /**
   * Fails the next matching request(s) (`fault.times`, default 1) after authentication and
   * validation: answered with `fault.status`, or applied and then never answered. `'git'`
   * matches every git request (`'POST git'` the upload-pack posts); for those, `dropAfterApplying`
   * closes the connection before git http-backend runs (recorded with status 0).
   */
  failNext(matcher: RequestMatcher, fault: InjectedFault): void;
  /** Faults armed by `failNext` that no request has used up yet. */
  pendingFaults(): number;
  /** The App's OAuth client (`GITHUB_CLIENT_ID`, `GITHUB_CLIENT_SECRET`) for the web sign-in flow. */
  readonly oauth: DoubleOAuthClient;
  /**
   * Who the browser is signed in to GitHub as: `/login/oauth/authorize` sends that user
   * straight back to the App's callback with a code (as GitHub does once a user has
   * authorized the App); null signs everyone out.
   */
  signInAs(login: string | null): void;
  /** Every user token issued through the web flow. */
  userTokens(): UserToken[];
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, result: HandlerResult): void {
  const headers = { 'x-github-request-id': randomUUID(), ...result.headers };
  if (result.raw) {
    response.writeHead(result.status, { ...headers, 'content-type': result.raw.contentType });
    response.end(result.raw.data);
  } else if (result.body === undefined) {
    response.writeHead(result.status, headers);
    response.end();
  } else {
    // Octokit parses only `application/json` answers; anything else comes back as text.
    response.writeHead(result.status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(result.body));
  }
}

/**
 * Starts the GitHub double on 127.0.0.1 (an ephemeral port). Every request is matched against
 * the routes of `openapi-subset.json`, authenticated (the app's JWT on `/app` endpoints, an
 * installation token the double issued elsewhere), validated with Ajv against GitHub's schemas,
 * and answered from the spec's example overridden by the double's state. What GitHub would
 * refuse is answered as GitHub would and recorded in `violations`.
 */
export async function startGitHubDouble(options: GitHubDoubleOptions = {}): Promise<GitHubDouble> {
  const { routes, source } = loadGitHubRoutes();
  const credentials = options.credentials ?? sharedTestAppCredentials();
  const slug = options.appSlug ?? 'fluksio';
  const app: DoubleApp = { id: credentials.appId, slug, name: slug };
  const state = new GitHubDoubleState();
  const requests: RecordedRequest[] = [];
  const violations: Violation[] = [];
  const faults = new FaultQueue();
  const oauth = new DoubleOAuth();
  const services: DoubleServices = { routes, state, faults, app, credentials, oauth, baseUrl: '' };
  const served = new Map<string, ServedRepository>();
  const gitServices = { state, faults, app, served };

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const { authorization, ...headers } = request.headers;
    const record: RecordedRequest = {
      method: (request.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: undefined,
      headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])),
      route: null,
      operationId: null,
      status: 0,
    };
    requests.push(record);
    if (url.pathname.startsWith(GIT_PATH_PREFIX)) {
      const findings: GitFindings = {};
      const status = await answerGitRequest(request, response, url, gitServices, findings).catch(
        (error: unknown) => {
          findings.violation = { kind: 'double-error', message: `The double failed: ${String(error)}` };
          if (!response.headersSent) response.writeHead(500).end();
          return 500;
        },
      );
      const { violation, ...found } = findings;
      Object.assign(record, { route: 'git', operationId: found.operationId ?? null, status, ...found });
      if (violation) violations.push({ method: record.method, path: record.path, ...violation });
      return;
    }
    const text = await readBody(request);
    if (oauth.handles(url.pathname)) {
      // The body carries the client secret and a code: it is not recorded.
      record.route = url.pathname;
      record.status = oauth.answer(request, response, url, text, violations);
      return;
    }
    const findings: RequestFindings = {};
    let answered: { result: HandlerResult; drop: boolean; holdUntil?: Promise<unknown> };
    try {
      answered = answerGitHubRequest(
        { method: record.method, url, authorization, accept: request.headers.accept ?? '', text },
        services,
        findings,
      );
    } catch (error) {
      const message = `The double failed: ${(error as Error).stack ?? String(error)}`;
      answered = { result: refusal(500, message, 'double-error'), drop: false };
    }
    const { result, drop, holdUntil } = answered;
    await holdUntil;
    Object.assign(record, {
      route: findings.route?.template ?? null,
      operationId: findings.route?.operationId ?? null,
      body: findings.body,
      status: result.status,
      ...(findings.installationId !== undefined && { installationId: findings.installationId }),
      ...(findings.tokenId !== undefined && { tokenId: findings.tokenId }),
      ...(findings.fault && { fault: findings.fault }),
    });
    if (result.violation) violations.push({ method: record.method, path: record.path, ...result.violation });
    if (drop) {
      // The request took effect; the client never hears of it.
      request.socket.destroy();
      return;
    }
    send(response, result);
  }

  const handler = (request: IncomingMessage, response: ServerResponse) => void serve(request, response);
  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const server = createServer(handler);
  const baseUrl = `http://127.0.0.1:${await listen(server)}`;
  services.baseUrl = baseUrl;
  const certificate = options.https ? localhostCertificate() : null;
  // The certificate as a file for git (GIT_SSL_CAINFO), removed when the double closes.
  const caDir = certificate && (await mkdtemp(path.join(tmpdir(), 'fluksio-double-ca-')));
  const caFile = caDir && path.join(caDir, 'github-double-ca.pem');
  if (certificate && caFile) await writeFile(caFile, certificate.cert);
  const httpsServer =
    certificate && createHttpsServer({ key: certificate.key, cert: certificate.cert }, handler);
  const httpsUrl = httpsServer && `https://127.0.0.1:${await listen(httpsServer)}`;
  const cloneUrl = (repo: string) => {
    const { owner, name } = state.requireRepository(repo);
    return `${httpsUrl ?? baseUrl}/git/${encodeURIComponent(owner)}/${encodeURIComponent(name)}.git`;
  };
  const stop = (stopped: Server) =>
    new Promise<void>((resolve, reject) => {
      stopped.closeAllConnections();
      stopped.close((error) => (error ? reject(error) : resolve()));
    });

  return {
    url: baseUrl,
    httpsUrl,
    caFile,
    credentials,
    app,
    requests,
    violations,
    source,
    addInstallation: (init) => state.addInstallation(init),
    addRepository: (init) => state.addRepository(init),
    setFile: (repo, ref, path, content) => state.setFile(repo, ref, path, content),
    setPullRequest: (repo, pullRequest) => state.setPullRequest(repo, pullRequest),
    setPermission: (repo, user, level) => state.setPermission(repo, user, level),
    setMergeBase: (repo, base, head, sha) => state.setMergeBase(repo, base, head, sha),
    setCommits: (repo, commits, commitOptions) => state.setCommits(repo, commits, commitOptions),
    addComment: (repo, issueNumber, comment) =>
      state.addComment(
        state.requireRepository(repo),
        issueNumber,
        comment.body,
        comment.user ?? DEFAULT_ACTOR,
      ),
    checkRuns: (repo) => state.checkRuns(state.requireRepository(repo)),
    comments: (repo, issueNumber) => state.comments(state.requireRepository(repo), issueNumber),
    reactions: (repo, commentId) => state.reactions(state.requireRepository(repo), commentId),
    issuedTokens: () => [...state.tokens.values()],
    serveRepository: (repo, dir) => {
      const repository = state.requireRepository(repo);
      served.set(repository.fullName.toLowerCase(), servedRepository(dir));
      repository.cloneUrl = cloneUrl(repo);
      return repository.cloneUrl;
    },
    cloneUrl,
    gitFetches: (repo) => {
      const fullName = state.requireRepository(repo).fullName.toLowerCase();
      return requests.filter(
        (request) => request.route === 'git' && request.repository?.toLowerCase() === fullName,
      );
    },
    oauth: oauth.client,
    signInAs: (login) => oauth.signInAs(login),
    userTokens: () => [...oauth.userTokens.values()],
    failNext: (matcher, fault) => faults.arm(matcher, fault),
    pendingFaults: () => faults.pending(),
    close: async () => {
      await Promise.all([stop(server), ...(httpsServer ? [stop(httpsServer)] : [])]);
      if (caDir) await rm(caDir, { recursive: true, force: true });
    },
  };
}
