import type { FastifyInstance } from 'fastify';
import { ClaimRequest } from '../../schemas/protocol/claim.js';
import { fluksioVersionOf } from '../../schemas/protocol/fluksio-user-agent.js';
import { PROTOCOL_HEADER } from '../../schemas/protocol/protocol-version.js';
import { finishLeasedRun } from '../../store/leases/finish-leased-run.js';
import { releaseLeasedRun } from '../../store/leases/release-leased-run.js';
import { CredentialRefusedError } from '../credential-refused-error.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { HttpError } from '../http/http-error.js';
import { requestAbort } from '../http/request-abort.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import type { RouteContext } from '../route-context.js';
import { toClaim } from '../to-claim.js';
import { waitForClaim } from '../wait-for-claim.js';

/**
 * `POST /api/v1/runner/claim {waitSeconds}` → 200 Claim | 204: a runner asks for work and
 * waits up to `waitSeconds` for a run whose labels it carries.
 */
export function claimRoute(app: FastifyInstance, context: RouteContext): void {
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  app.post('/api/v1/runner/claim', { onRequest: runnerAuth.onRequest }, async (request, reply) => {
    const runner = runnerAuth.of(request);
    const { waitSeconds, acceptForks } = parseInput(ClaimRequest, request.body ?? {}, 'body');
    const abort = requestAbort(reply.raw, context.closing);
    try {
      const run = await waitForClaim({
        db: context.db,
        doorbell: context.doorbell,
        handoff: context.handoff,
        runner,
        acceptForks,
        leaseTtlMs: context.settings.leaseTtlMs,
        waitMs: waitSeconds * 1000,
        recheckMs: context.settings.claimRecheckMs,
        signal: abort.stop,
      });
      if (!run) return reply.code(204).send();
      // The runner hung up while the claim was being made: give the run back now rather
      // than leaving it to the sweeper a lease TTL from now.
      const giveBack = async (): Promise<void> => {
        if (run.leaseId === null) return;
        await releaseLeasedRun({
          db: context.db,
          runId: run.id,
          leaseId: run.leaseId,
          reason: `Runner "${runner.name}" went away before it received the claim`,
        });
        await context.doorbell.ring();
      };
      if (abort.hungUp.aborted) {
        await giveBack();
        return reply;
      }
      let extraHeader: string | null = null;
      try {
        extraHeader = (await context.gitCredentials?.forRun(run)) ?? null;
      } catch (error) {
        if (error instanceof CredentialRefusedError && run.leaseId !== null) {
          // Asking again would hand this same run, the oldest, to every runner forever and
          // hold back the runs behind it: it fails, saying why, and the runner asks again.
          request.log.warn({ err: error, runId: run.id }, 'the fetch credential is refused: run failed');
          await finishLeasedRun({
            db: context.db,
            runId: run.id,
            leaseId: run.leaseId,
            status: 'failed',
            reason: error.message,
            metrics: {},
          });
          context.onRunChanged?.(run.id);
          return reply.code(204).send();
        }
        // Without its credential the fetch would fail on the runner and fail the run: give
        // it back instead, and have the runner try again later (503 is retried).
        request.log.error(
          { err: error, runId: run.id },
          'could not mint the fetch credential; run queued again',
        );
        if (run.leaseId !== null) {
          await releaseLeasedRun({
            db: context.db,
            runId: run.id,
            leaseId: run.leaseId,
            reason: 'GitHub did not grant a token to fetch the code; queued again',
          });
          context.onRunChanged?.(run.id);
        }
        throw new HttpError(
          503,
          `Could not get a GitHub token to fetch ${run.repository}; try again shortly`,
        );
      }
      if (abort.hungUp.aborted) {
        // Gone while the token was minted: nobody holds it, so it is revoked at once.
        if (extraHeader !== null)
          await context.gitCredentials?.revoke(extraHeader).catch((error: unknown) => {
            request.log.warn({ err: error, runId: run.id }, 'could not revoke an unclaimed fetch credential');
          });
        await giveBack();
        return reply;
      }
      // The runner waits on this answer to start; the log line, the check run and open pages
      // can wait a turn of the event loop (the ring's write to Redis comes after this one).
      setImmediate(() => {
        try {
          request.log.info(
            {
              runId: run.id,
              runner: runner.name,
              attempt: run.attempt,
              runnerVersion: fluksioVersionOf(request.headers['user-agent']) ?? 'unknown',
              protocol: request.headers[PROTOCOL_HEADER.toLowerCase()] ?? 'none',
            },
            'run claimed',
          );
        } catch {
          // A log line that cannot be written loses only itself: the run is claimed.
        }
        context.onRunChanged?.(run.id);
      });
      return reply.code(200).send(toClaim(run, context.settings.heartbeatIntervalMs, extraHeader));
    } finally {
      abort.release();
    }
  });
}
