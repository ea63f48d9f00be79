import type { FastifyRequest } from 'fastify';
import type { ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import type { Database } from '../../store/db/database.js';
import { findApiTokenByHash } from '../../store/tokens/find-api-token-by-hash.js';
import { bearerToken } from './bearer-token.js';
import { hashToken } from './hash-token.js';
import { HttpError } from './http-error.js';

/**
 * The API token the request carries, or 401; 403 when it is a `read` token and the route
 * changes something (`submit`: queueing and cancelling runs).
 */
export async function authenticateSubmitter(
  db: Database,
  request: FastifyRequest,
  scope: 'read' | 'submit',
): Promise<ApiTokenRow> {
  const token = await findApiTokenByHash({ db, tokenHash: hashToken(bearerToken(request, 'API token')) });
  if (!token) {
    throw new HttpError(
      401,
      'Authorization: this API token is not known (it was revoked, or is mistyped)',
      'Authorization',
    );
  }
  if (scope === 'submit' && token.scope !== 'submit') {
    throw new HttpError(
      403,
      `API token "${token.name}" may only read runs; queueing and cancelling need a token made with --submit`,
      'Authorization',
    );
  }
  return token;
}

/** Whether a token may see and act on a repository's runs. */
export function tokenReaches(token: ApiTokenRow, repository: string): boolean {
  return token.repositories.includes(repository);
}
