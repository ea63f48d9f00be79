import type { DoubleRepository, IssuedToken } from './github-double-records.js';
import type { GitHubDoubleState } from './github-double-state.js';
import { refusal, type HandlerResult } from './github-handler.js';
import type { GitHubRoute } from './github-routes.js';
import type { UserToken } from './github-double-records.js';
import type { DoubleOAuth } from './oauth-handlers.js';
import type { TestAppCredentials } from './test-app-credentials.js';
import { appJwtProblem } from './verify-app-jwt.js';

/** Who a request is from: an installation's token, a user's, the app itself (neither), or refused. */
export type Authentication =
  { token?: IssuedToken; user?: UserToken; refused?: undefined } | { refused: HandlerResult };

/**
 * The operations the double answers for a user's token (the run pages' sign-in): who the
 * user is, and whether they can see a repository. GitHub takes user tokens on most routes;
 * fluksio must not need them anywhere else, so any other use is a violation.
 */
const USER_TOKEN_OPERATIONS = new Set(['users/get-authenticated', 'repos/get']);

/**
 * Checks a request's `Authorization` as GitHub does: `/app` endpoints (and a repository's
 * installation) need the app's JWT, signed with its key; everything else an installation
 * token the double issued, as `token …` or `Bearer …`. A missing or wrong kind of credential is
 * a violation; an unknown, revoked or expired token is GitHub's ordinary 401, since a test may
 * use a revoked token on purpose.
 */
export function authenticateRequest(
  route: GitHubRoute,
  authorization: string | undefined,
  known: { state: GitHubDoubleState; credentials: TestAppCredentials; oauth: DoubleOAuth },
): Authentication {
  const refuse = (message: string) => ({ refused: refusal(401, message, 'authentication') });
  if (!authorization)
    return refuse(`Requires authentication: ${route.method} ${route.template} sent no Authorization header`);
  const [scheme = '', credential = ''] = authorization.split(/\s+/, 2);
  const isJwt = credential.split('.').length === 3;
  if (route.authentication === 'app-jwt') {
    if (scheme.toLowerCase() !== 'bearer' || !isJwt) {
      return refuse(`${route.template} must be called with the app's JWT ("Bearer <jwt>")`);
    }
    const problem = appJwtProblem(credential, {
      appId: known.credentials.appId,
      key: known.credentials.privateKey,
    });
    return problem ? refuse(`A JSON web token could not be decoded: ${problem}`) : {};
  }
  if (isJwt) return refuse(`${route.template} needs an installation token, not the app's JWT`);
  if (!['token', 'bearer'].includes(scheme.toLowerCase()))
    return refuse(`Unknown authorization scheme "${scheme}"`);
  const user = known.oauth.userToken(credential);
  if (user) {
    if (!USER_TOKEN_OPERATIONS.has(route.operationId))
      return refuse(
        `fluksio calls ${route.operationId} with a user's token; only the pages' sign-in may use one`,
      );
    return { user };
  }
  if (route.authentication === 'user-token' && known.state.tokens.has(credential))
    return {
      refused: refusal(
        403,
        `Resource not accessible by integration: ${route.template} needs a user's token`,
        'authorization',
      ),
    };
  const token = known.state.tokens.get(credential);
  if (!token || token.revokedAt !== null || token.expiresAt.getTime() <= Date.now()) {
    return { refused: refusal(401, 'Bad credentials') };
  }
  return { token };
}

/**
 * Checks that an installation token may touch `repository` with this route: the repository
 * belongs to its installation and to the repositories it was minted for (else GitHub's 404),
 * and it carries one of the permissions the route needs (else 403, "Resource not accessible
 * by integration"). A user's token reaches the repositories the user may read. Requests
 * made with the app's JWT are not checked here.
 */
export function authorizeRequest(
  route: GitHubRoute,
  repository: DoubleRepository,
  token: IssuedToken | undefined,
  user?: { state: GitHubDoubleState; token: UserToken },
): HandlerResult | undefined {
  // A user's token sees what both the user and the App's installation see; a repository the
  // user cannot read is GitHub's ordinary 404, no violation: the pages ask exactly that.
  if (user)
    return user.state.permission(repository, user.token.login) === 'none'
      ? refusal(404, 'Not Found')
      : undefined;
  if (!token) return undefined;
  if (
    repository.installationId !== token.installationId ||
    (token.repositoryIds && !token.repositoryIds.includes(repository.id))
  ) {
    return refusal(
      404,
      `The token of installation ${token.installationId} cannot see ${repository.fullName}`,
      'authorization',
    );
  }
  const granted =
    route.permissions.length === 0 ||
    route.permissions.some(
      ([name, level]) => token.permissions[name] === 'write' || token.permissions[name] === level,
    );
  if (granted) return undefined;
  const needed = route.permissions.map(([name, level]) => `${name}: ${level}`).join(' or ');
  return refusal(
    403,
    `Resource not accessible by integration: ${route.operationId} needs ${needed}`,
    'authorization',
  );
}
