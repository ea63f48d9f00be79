import type { FastifyInstance } from 'fastify';
import type { HeartbeatReply } from '../../schemas/protocol/lease-requests.js';
import { RunWatchRequest } from '../../schemas/protocol/run-watch.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { holdLease, staleLease } from '../http/hold-lease.js';
import { requestAbort } from '../http/request-abort.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdParams } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';

/**
 * `POST /api/v1/runs/:id/watch {lease, waitSeconds}` → HeartbeatReply: the runner holding
 * the run long-polls for its stop (a cancel, the run's time limit), answered as soon as
 * one is asked in any replica, or with nothing to do once the wait is over, when the runner
 * hangs up, or when this server begins to close. Authenticated as a heartbeat is: another
 * runner's run is 404, a stale lease 409 (CancelWatches says how it waits).
 */
export function runWatchRoute(app: FastifyInstance, context: RouteContext): void {
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  app.post(
    '/api/v1/runs/:id/watch',
    { onRequest: runnerAuth.onRequest },
    async (request, reply): Promise<HeartbeatReply> => {
      const runner = runnerAuth.of(request);
      const { id: runId } = parseInput(RunIdParams, request.params, 'id');
      const { lease, waitSeconds } = parseInput(RunWatchRequest, request.body ?? {}, 'body');
      await holdLease({ db: context.db, runner, runId, lease });
      const abort = requestAbort(reply.raw, context.closing);
      try {
        const answer = await context.cancelWatches.watch({
          runId,
          leaseId: lease,
          waitMs: waitSeconds * 1000,
          signal: abort.stop,
        });
        if (!answer) throw staleLease(runId);
        if (answer.cancel)
          request.log.info({ runId, reason: answer.reason }, 'runner told to stop the run (watch)');
        return answer;
      } finally {
        abort.release();
      }
    },
  );
}
