import { execFileSync, spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { DoubleApp, Violation } from './github-handler.js';
import type { DoubleRepository, IssuedToken } from './github-double-records.js';
import type { GitHubDoubleState } from './github-double-state.js';
import type { FaultQueue } from './github-faults.js';

/** Where a repository's smart-HTTP URLs live on the double: `/git/<owner>/<name>.git/…`. */
export const GIT_PATH_PREFIX = '/git/';

const GIT_PATH = /^\/git\/([^/]+)\/([^/]+?)(?:\.git)?(\/.*)$/;
const GIT_HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';
const REALM = 'Basic realm="GitHub"';
const UPLOAD_PACK = 'git-upload-pack';
const RECEIVE_PACK = 'git-receive-pack';

/** A repository the double serves over git's smart HTTP: where its git directory is. */
export interface ServedRepository {
  /** `GIT_PROJECT_ROOT` for `git http-backend`: the directory holding the git directory. */
  projectRoot: string;
  /** The git directory's name under it (`.git` for a work tree), the first part of `PATH_INFO`. */
  gitDirName: string;
}

/**
 * The git directory of `dir` (a work tree, or a bare repository), as `git http-backend` is
 * given it. Throws a sentence when `dir` is not a repository.
 */
export function servedRepository(dir: string): ServedRepository {
  let gitDir: string;
  try {
    gitDir = execFileSync('git', ['rev-parse', '--absolute-git-dir'], {
      cwd: dir,
      env: gitEnvironment(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (error) {
    throw new Error(`serveRepository: ${dir} is not a git repository (${(error as Error).message.trim()})`, {
      cause: error,
    });
  }
  return { projectRoot: path.dirname(gitDir), gitDirName: path.basename(gitDir) };
}

/** What a git request is answered from. */
export interface GitServices {
  state: GitHubDoubleState;
  faults: FaultQueue;
  app: DoubleApp;
  /** Served repositories by lower-cased `owner/name`. */
  served: ReadonlyMap<string, ServedRepository>;
}

/** What the double learnt about a git request, for `double.requests`. */
export interface GitFindings {
  repository?: string;
  operationId?: string;
  tokenId?: number;
  installationId?: number;
  fault?: 'injected' | 'dropped';
  violation?: Omit<Violation, 'method' | 'path'>;
}

/** The service a smart-HTTP request is for, or null for anything else (dumb HTTP, unknown paths). */
function serviceOf(method: string, rest: string, url: URL): string | null {
  if (method === 'GET' && rest === '/info/refs') return url.searchParams.get('service');
  if (method === 'POST' && (rest === `/${UPLOAD_PACK}` || rest === `/${RECEIVE_PACK}`)) return rest.slice(1);
  return null;
}

/** The installation token in `Authorization: Basic base64("x-access-token:<token>")`, or null. */
function basicToken(authorization: string | undefined): string | null {
  const match = /^basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  if (separator < 0 || decoded.slice(0, separator) !== 'x-access-token') return null;
  return decoded.slice(separator + 1) || null;
}

/** A plain-text answer, as GitHub's git endpoints give them; git prints it after `remote: `. */
function sendText(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): number {
  response.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
  response.end(`${text}\n`);
  return status;
}

/** The environment every git the double runs gets: no GIT_* of the test process, no user config. */
function gitEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('GIT_')) env[name] = value;
  }
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };
}

/**
 * Answers a request under `/git/` as GitHub's git smart-HTTP endpoints do, for repositories given
 * to `serveRepository`: `GET …/info/refs?service=git-upload-pack` and `POST …/git-upload-pack`
 * (protocol v0 and v2) are passed to `git http-backend`, only for a request carrying
 * `Authorization: Basic base64("x-access-token:<token>")` with a token the double issued, not
 * revoked or expired, that can read the repository's contents. No or a bad credential is 401 with
 * `WWW-Authenticate` (git, which must not prompt, fails); a token that cannot see the repository
 * 404, as GitHub hides repositories; one without `contents` 403. Pushes are always refused.
 * Unlike GitHub, a public repository is not readable anonymously: a fetch made without its token
 * must fail here. Resolves with the status answered.
 */
export async function answerGitRequest(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  services: GitServices,
  findings: GitFindings,
): Promise<number> {
  const method = (request.method ?? 'GET').toUpperCase();
  const parts = GIT_PATH.exec(url.pathname);
  const service = parts && serviceOf(method, parts[3] ?? '', url);
  const fullName = parts && decodedName(parts[1] ?? '', parts[2] ?? '');
  if (!parts || !fullName || (service !== UPLOAD_PACK && service !== RECEIVE_PACK)) {
    const message = `${method} ${url.pathname}${url.search} is not a git smart-HTTP request the double serves (info/refs?service=git-upload-pack, git-upload-pack)`;
    findings.violation = { kind: 'unknown-route', message };
    request.resume();
    return sendText(response, 404, message);
  }
  findings.operationId = service;
  findings.repository = fullName;
  const refuse = (status: number, text: string, headers?: Record<string, string>) => {
    request.resume();
    return sendText(response, status, text, headers);
  };

  const repository = services.state.repository(fullName);
  const served = services.served.get(fullName.toLowerCase());
  if (!repository || !served) {
    const message = repository
      ? `The double does not serve ${fullName} over git (call serveRepository in the test)`
      : `The double has no repository ${fullName} (call addRepository and serveRepository in the test)`;
    findings.violation = { kind: 'unknown-repository', message };
    return refuse(404, 'Repository not found.');
  }

  const credential = basicToken(request.headers.authorization);
  const token: IssuedToken | undefined =
    credential === null ? undefined : services.state.tokens.get(credential);
  if (!token || token.revokedAt !== null || token.expiresAt.getTime() <= Date.now()) {
    return refuse(
      401,
      'Invalid username or token. Password authentication is not supported for Git operations.',
      { 'www-authenticate': REALM },
    );
  }
  findings.tokenId = token.id;
  findings.installationId = token.installationId;
  if (!canSee(token, repository)) return refuse(404, 'Repository not found.');
  const denied = `Permission to ${repository.fullName}.git denied to ${services.app.slug}[bot].`;
  const contents = token.permissions.contents;
  if (service === RECEIVE_PACK || (contents !== 'read' && contents !== 'write')) return refuse(403, denied);

  const fault = services.faults.take({
    method,
    path: url.pathname,
    route: 'git',
    operationId: service,
    body: undefined,
  });
  if (fault?.dropAfterApplying) {
    findings.fault = 'dropped';
    request.socket.destroy();
    return 0;
  }
  if (fault) {
    findings.fault = 'injected';
    const status = fault.status ?? 502;
    return refuse(status, status >= 500 ? 'Server Error' : 'Injected failure', fault.headers);
  }
  return runHttpBackend(request, response, served, parts[3] ?? '', url, findings);
}

/** `owner/name` from the path's percent-encoded parts, or null when they are not valid encoding. */
function decodedName(owner: string, name: string): string | null {
  try {
    return `${decodeURIComponent(owner)}/${decodeURIComponent(name)}`;
  } catch {
    return null;
  }
}

function canSee(token: IssuedToken, repository: DoubleRepository): boolean {
  return (
    token.installationId === repository.installationId &&
    (token.repositoryIds === null || token.repositoryIds.includes(repository.id))
  );
}

/** Runs `git http-backend` as a CGI program: the request's body in, its headers parsed, its body out. */
function runHttpBackend(
  request: IncomingMessage,
  response: ServerResponse,
  served: ServedRepository,
  rest: string,
  url: URL,
  findings: GitFindings,
): Promise<number> {
  const header = (name: string): string | undefined => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const contentLength = header('content-length');
  const contentEncoding = header('content-encoding');
  const gitProtocol = header('git-protocol');
  const cgi: Record<string, string> = {
    ...gitEnvironment(),
    GIT_PROJECT_ROOT: served.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${served.gitDirName}${rest}`,
    QUERY_STRING: url.search.replace(/^\?/, ''),
    REQUEST_METHOD: (request.method ?? 'GET').toUpperCase(),
    REMOTE_USER: 'x-access-token',
    REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
    CONTENT_TYPE: header('content-type') ?? '',
    ...(contentLength !== undefined && { CONTENT_LENGTH: contentLength }),
    ...(contentEncoding !== undefined && { HTTP_CONTENT_ENCODING: contentEncoding }),
    // Protocol v2, passed on as git-http-backend's documentation has web servers do.
    ...(gitProtocol !== undefined && { GIT_PROTOCOL: gitProtocol }),
    // A fetch may ask for any commit the repository has by its id, as the runner does: what
    // protocol v2 allows anyway, and GitHub too (a force-pushed-away commit stays fetchable
    // until it is collected). Pushes never get here; http-backend would refuse them again.
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'uploadpack.allowAnySHA1InWant',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_KEY_1: 'http.receivepack',
    GIT_CONFIG_VALUE_1: 'false',
  };
  const child = spawn(GIT_HTTP_BACKEND, [], { env: cgi, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 16_384) stderr += chunk.toString();
  });
  // http-backend may stop reading (a refused or failed request) before the body is sent.
  child.stdin.on('error', () => {});
  request.pipe(child.stdin);
  response.on('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  return new Promise((resolve) => {
    let head = Buffer.alloc(0);
    let status = 0;
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const parsed = parseCgiHead(head);
      if (!parsed) return;
      status = parsed.status;
      response.writeHead(parsed.status, parsed.headers);
      response.write(parsed.body);
      child.stdout.off('data', onData);
      child.stdout.pipe(response);
    };
    child.stdout.on('data', onData);
    child.on('error', (error) => {
      findings.violation = { kind: 'double-error', message: `git http-backend: ${error.message}` };
      if (!response.headersSent) resolve(sendText(response, 500, `git http-backend: ${error.message}`));
    });
    child.on('close', (code) => {
      if (status === 0) {
        const message = `git http-backend exited with ${code} before answering: ${stderr.trim()}`;
        findings.violation = { kind: 'double-error', message };
        resolve(response.headersSent ? 500 : sendText(response, 500, message));
        return;
      }
      // A body already started (a fetch of a commit the repository lacks ends in git's own
      // error line); the status stays what was sent.
      response.end();
      resolve(status);
    });
  });
}

/**
 * The CGI answer's head, once `data` holds all of it: `Status: 404 Not Found` as the status
 * (200 without one), every other line a header, and what follows the blank line.
 */
export function parseCgiHead(
  data: Buffer,
): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  const crlf = data.indexOf('\r\n\r\n');
  const lf = data.indexOf('\n\n');
  const [end, separator] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : lf >= 0 ? [lf, 2] : [-1, 0];
  if (end < 0) return undefined;
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of data.subarray(0, end).toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name.toLowerCase()] = value;
  }
  return { status, headers, body: data.subarray(end + separator) };
}
