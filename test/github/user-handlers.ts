import { refusal, type OperationHandler } from './github-handler.js';
import { renderAccount } from './github-shapes.js';

/** `GET /user`: the user a user's token belongs to (authenticate-request.ts admits only those). */
const getAuthenticatedUser: OperationHandler = (context) => {
  if (!context.user) return refusal(500, 'GET /user reached its handler without a user', 'double-error');
  const example = context.route.example() as Record<string, unknown>;
  const account = renderAccount({ login: context.user.login });
  return { status: 200, body: { ...example, ...account, name: context.user.login, email: null } };
};

/** The operations answered for a user's token (the run pages' sign-in). */
export const userHandlers: Record<string, OperationHandler> = {
  'users/get-authenticated': getAuthenticatedUser,
};
