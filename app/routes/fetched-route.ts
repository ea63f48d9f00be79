import type { FastifyInstance } from 'fastify';
import { FetchedRequest, type FetchedReply } from '../../schemas/protocol/lease-requests.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { holdLease } from '../http/hold-lease.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdParams } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';

/**
 * `POST /api/v1/runs/:id/fetched {lease, extraHeader}` → `{revoked}`: the runner holding
 * the run fetched its commit, and the credential its claim carried is revoked (DESIGN §6).
 * A revocation GitHub refuses is logged, not the runner's problem: the token expires
 * within the hour regardless.
 */
export function fetchedRoute(app: FastifyInstance, context: RouteContext): void {
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  app.post(
    '/api/v1/runs/:id/fetched',
    { onRequest: runnerAuth.onRequest },
    async (request): Promise<FetchedReply> => {
      const runner = runnerAuth.of(request);
      const { id: runId } = parseInput(RunIdParams, request.params, 'id');
      const body = parseInput(FetchedRequest, request.body, 'body');
      await holdLease({ db: context.db, runner, runId, lease: body.lease, running: true });
      if (!context.gitCredentials) return { revoked: false };
      try {
        const revoked = await context.gitCredentials.revoke(body.extraHeader);
        request.log.info({ runId, revoked }, 'fetch credential revoked');
        return { revoked };
      } catch (error) {
        request.log.warn(
          { err: error, runId },
          'could not revoke the fetch credential; it expires within the hour',
        );
        return { revoked: false };
      }
    },
  );
}
