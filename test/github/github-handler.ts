import type { ErrorObject } from 'ajv';
import type { DoubleRepository, IssuedToken, UserToken } from './github-double-records.js';
import type { GitHubDoubleState } from './github-double-state.js';
import type { GitHubRoute } from './github-routes.js';

/** The app the double plays GitHub for. */
export interface DoubleApp {
  id: number;
  slug: string;
  name: string;
}

/** A validated request, as an operation's handler sees it. */
export interface HandlerContext {
  route: GitHubRoute;
  /** Path parameters, coerced to their schema types (`check_run_id` is a number). */
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  /** The repository a `/repos/{owner}/{repo}/…` route names (already checked to exist). */
  repository: DoubleRepository | undefined;
  /** The installation token that authenticated the request, if one did. */
  token: IssuedToken | undefined;
  /** The user's token that authenticated the request (the pages' sign-in), if one did. */
  user: UserToken | undefined;
  /** The `accept` header (`application/vnd.github.raw` asks for a file's raw content). */
  accept: string;
  state: GitHubDoubleState;
  app: DoubleApp;
  /** The request's URL on the double, for pagination links. */
  url: URL;
}

/** Why a request broke GitHub's rules (or, for `double-error`/`invalid-response`, the double's own bug). */
export type ViolationKind =
  | 'unknown-route'
  | 'invalid-request'
  | 'authentication'
  | 'authorization'
  | 'unknown-repository'
  | 'invalid-response'
  | 'double-error';

/** A request GitHub would have refused, recorded so a test can insist there were none. */
export interface Violation {
  kind: ViolationKind;
  method: string;
  path: string;
  message: string;
  /** Ajv's errors for `invalid-request`/`invalid-response`. */
  errors?: ErrorObject[];
}

/** What the double answers; a `violation` is recorded in `double.violations`. */
export interface HandlerResult {
  status: number;
  body?: unknown;
  /** A body that is not JSON (a raw file), sent with its own content type. */
  raw?: { contentType: string; data: Buffer };
  headers?: Record<string, string>;
  violation?: Omit<Violation, 'method' | 'path'>;
}

/** An operation's implementation. */
export type OperationHandler = (context: HandlerContext) => HandlerResult;

const DOCS = 'https://docs.github.com/rest';

/** GitHub's error answer; with a `kind`, also a recorded violation. */
export function refusal(
  status: number,
  message: string,
  kind?: ViolationKind,
  errors?: ErrorObject[],
): HandlerResult {
  return {
    status,
    body: { message, ...(errors && { errors }), documentation_url: DOCS, status: String(status) },
    ...(kind && { violation: { kind, message, ...(errors && { errors }) } }),
  };
}

/** GitHub's 404 for something that does not exist: an ordinary answer, not a violation. */
export function notFound(): HandlerResult {
  return refusal(404, 'Not Found');
}

/** GitHub's 422 for a request its schema allows but GitHub refuses; recorded as a violation. */
export function unprocessable(message: string): HandlerResult {
  return refusal(422, `Validation Failed: ${message}`, 'invalid-request');
}

/** The repository of a `/repos/{owner}/{repo}` route; handlers run only once it was found. */
export function repositoryOf(context: HandlerContext): DoubleRepository {
  if (!context.repository) throw new Error(`${context.route.template} names no repository`);
  return context.repository;
}

/**
 * One page of `items` per `page`/`per_page` (GitHub's default 30, at most 100), with the `link`
 * header Octokit's paginate follows.
 */
export function paginate<T>(
  context: HandlerContext,
  items: T[],
): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Math.max(Number(context.query.per_page ?? 30), 1), 100);
  const page = Math.max(Number(context.query.page ?? 1), 1);
  const lastPage = Math.max(Math.ceil(items.length / perPage), 1);
  const linkTo = (target: number): string => {
    const url = new URL(context.url);
    url.searchParams.set('per_page', String(perPage));
    url.searchParams.set('page', String(target));
    return url.toString();
  };
  const links: string[] = [];
  if (page < lastPage) links.push(`<${linkTo(page + 1)}>; rel="next"`, `<${linkTo(lastPage)}>; rel="last"`);
  if (page > 1) links.push(`<${linkTo(1)}>; rel="first"`, `<${linkTo(page - 1)}>; rel="prev"`);
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(', ') } : {},
  };
}
