import type { FastifyRequest } from 'fastify';
import { fluksioVersionOf } from '../../schemas/protocol/fluksio-user-agent.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../../store/db/database.js';
import { findRunnerByTokenHash } from '../../store/runners/find-runner-by-token-hash.js';
import { bearerToken } from './bearer-token.js';
import { hashToken } from './hash-token.js';
import { HttpError } from './http-error.js';

/**
 * The runner whose token the request carries (which also marks it seen, for the online
 * window `onlineWindowMs`, with the fluksio version its `User-Agent` names), or 401.
 */
export async function authenticateRunner(
  db: Database,
  request: FastifyRequest,
  onlineWindowMs: number,
): Promise<RunnerRow> {
  const token = bearerToken(request, 'runner token');
  const runner = await findRunnerByTokenHash({
    db,
    tokenHash: hashToken(token),
    onlineWindowMs,
    version: fluksioVersionOf(request.headers['user-agent']),
  });
  if (!runner) {
    throw new HttpError(
      401,
      'Authorization: this runner token is not known (the runner was removed, or the token is mistyped)',
      'Authorization',
    );
  }
  return runner;
}
