import { appHandlers } from './app-handlers.js';
import { authenticateRequest, authorizeRequest } from './authenticate-request.js';
import { checkRunHandlers } from './check-run-handlers.js';
import type { DoubleRepository } from './github-double-records.js';
import type { GitHubDoubleState } from './github-double-state.js';
import { defaultFaultBody, type FaultQueue } from './github-faults.js';
import { refusal, type DoubleApp, type HandlerResult, type OperationHandler } from './github-handler.js';
import type { GitHubRoute } from './github-routes.js';
import { issueHandlers } from './issue-handlers.js';
import type { DoubleOAuth } from './oauth-handlers.js';
import { repositoryHandlers } from './repository-handlers.js';
import type { TestAppCredentials } from './test-app-credentials.js';
import { userHandlers } from './user-handlers.js';

const HANDLERS: Record<string, OperationHandler> = {
  ...appHandlers,
  ...repositoryHandlers,
  ...issueHandlers,
  ...checkRunHandlers,
  ...userHandlers,
};

/** A request as received: its method, URL, headers and body text. */
export interface IncomingGitHubRequest {
  method: string;
  url: URL;
  authorization: string | undefined;
  accept: string;
  text: string;
}

/** What the pipeline learnt about the request, for `double.requests`. */
export interface RequestFindings {
  route?: GitHubRoute;
  body?: unknown;
  installationId?: number;
  tokenId?: number;
  fault?: 'injected' | 'dropped';
}

/** Everything a request is answered from. */
export interface DoubleServices {
  routes: GitHubRoute[];
  state: GitHubDoubleState;
  faults: FaultQueue;
  app: DoubleApp;
  credentials: TestAppCredentials;
  oauth: DoubleOAuth;
  baseUrl: string;
}

function decodeParameters(raw: Record<string, string>): Record<string, string> | undefined {
  try {
    return Object.fromEntries(Object.entries(raw).map(([name, value]) => [name, decodeURIComponent(value)]));
  } catch {
    return undefined;
  }
}

/**
 * Answers one request as GitHub would, in GitHub's order: route, authentication, JSON,
 * schema validation, repository and token scope, then (unless a fault is armed for it) the
 * operation's handler, whose answer is itself checked against the success response's schema.
 * Returns the answer, whether to drop it (`dropAfterApplying`) and what to hold it for
 * (`answerAfter`); `findings` is filled in along the way.
 */
export function answerGitHubRequest(
  request: IncomingGitHubRequest,
  services: DoubleServices,
  findings: RequestFindings,
): { result: HandlerResult; drop: boolean; holdUntil?: Promise<unknown> } {
  const refused = (result: HandlerResult) => ({ result, drop: false });
  const { method, url } = request;
  const candidates = services.routes.filter((route) => route.match(url.pathname));
  const route = candidates.find((candidate) => candidate.method === method);
  if (!route) {
    const methods = candidates.map((candidate) => candidate.method).join(', ');
    const message = methods
      ? `${method} is not an operation of ${candidates[0]?.template} in the subset (it has ${methods})`
      : `${method} ${url.pathname} matches no operation of openapi-subset.json`;
    return refused(refusal(404, message, 'unknown-route'));
  }
  findings.route = route;
  const authentication = authenticateRequest(route, request.authorization, services);
  if (authentication.refused) return refused(authentication.refused);
  const { token, user } = authentication;
  findings.installationId = token?.installationId;
  findings.tokenId = token?.id;

  if (request.text !== '') {
    try {
      findings.body = JSON.parse(request.text) as unknown;
    } catch {
      return refused(refusal(400, 'Problems parsing JSON', 'invalid-request'));
    }
  }
  const path = decodeParameters(route.match(url.pathname) ?? {});
  if (!path)
    return refused(refusal(400, 'A path parameter is not valid percent-encoding', 'invalid-request'));
  const parameters = {
    path: path as Record<string, unknown>,
    query: Object.fromEntries(url.searchParams) as Record<string, unknown>,
  };
  const errors = [
    ...(route.validateParameters(parameters) ?? []),
    ...((method !== 'GET' || findings.body !== undefined
      ? route.validateBody(findings.body ?? {})
      : undefined) ?? []),
  ];
  if (errors.length > 0) {
    const summary = errors.map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`).join('; ');
    return refused(refusal(422, `Invalid request: ${summary}`, 'invalid-request', errors));
  }

  let repository: DoubleRepository | undefined;
  if (typeof parameters.path.owner === 'string' && typeof parameters.path.repo === 'string') {
    const fullName = `${parameters.path.owner}/${parameters.path.repo}`;
    repository = services.state.repository(fullName);
    if (!repository) {
      return refused(
        refusal(
          404,
          `The double has no repository ${fullName} (call addRepository in the test)`,
          'unknown-repository',
        ),
      );
    }
    const unauthorized = authorizeRequest(
      route,
      repository,
      token,
      user && { state: services.state, token: user },
    );
    if (unauthorized) return refused(unauthorized);
  }

  const fault = services.faults.take({
    method,
    path: url.pathname,
    route: route.template,
    operationId: route.operationId,
    body: findings.body,
  });
  if (fault?.status !== undefined && !fault.dropAfterApplying) {
    findings.fault = 'injected';
    const status = fault.status;
    return {
      result: { status, headers: fault.headers, body: fault.body ?? defaultFaultBody(fault) },
      drop: false,
    };
  }

  const handler = HANDLERS[route.operationId];
  if (!handler)
    return refused(refusal(500, `The double has no handler for ${route.operationId}`, 'double-error'));
  const result = handler({
    route,
    params: parameters.path,
    query: parameters.query,
    body: (findings.body ?? {}) as Record<string, unknown>,
    repository,
    token,
    user,
    accept: request.accept,
    state: services.state,
    app: services.app,
    url: new URL(`${url.pathname}${url.search}`, services.baseUrl),
  });
  if (result.status === route.successStatus && result.body !== undefined) {
    const responseErrors = route.validateResponse(result.body);
    if (responseErrors) {
      result.violation = {
        kind: 'invalid-response',
        message: `The double's answer to ${route.operationId} departs from GitHub's schema (a bug in the double)`,
        errors: responseErrors,
      };
    }
  }
  if (fault?.dropAfterApplying) findings.fault = 'dropped';
  return { result, drop: fault?.dropAfterApplying === true, holdUntil: fault?.answerAfter };
}
