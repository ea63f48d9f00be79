import type { FastifyInstance } from 'fastify';
import { ResumeRequest, type ResumeReply } from '../../schemas/protocol/resume-run.js';
import { resumeLeasedRun } from '../../store/leases/resume-leased-run.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { staleLease } from '../http/hold-lease.js';
import { HttpError } from '../http/http-error.js';
import { noSuchRun } from '../http/load-run.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdParams } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';
import { toClaim } from '../to-claim.js';

/**
 * `POST /api/v1/runs/:id/resume {lease}` → ResumeReply: a runner that died mid-run and
 * started again goes on with the run it held, in the same attempt (resume-leased-run.ts).
 * Another runner's run is 404, as an unknown one; a lease no longer the run's is 409, and
 * so is a run whose cancel is pending (the runner then gives it back, which ends it as
 * the cancel asked). A run not started yet is checked out anew, so its reply carries a
 * fresh fetch credential; a started one's checkout is where its jobs run, and is not
 * fetched again. A runner that does not fence its writes by the lease's epoch is refused
 * (400) before anything changes: it then gives the run back under its lease.
 */
export function resumeRoute(app: FastifyInstance, context: RouteContext): void {
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  app.post(
    '/api/v1/runs/:id/resume',
    { onRequest: runnerAuth.onRequest },
    async (request): Promise<ResumeReply> => {
      const runner = runnerAuth.of(request);
      const { id: runId } = parseInput(RunIdParams, request.params, 'id');
      const body = parseInput(ResumeRequest, request.body, 'body');
      if (body.fencing !== 'epoch') {
        throw new HttpError(
          400,
          `body.fencing: run ${runId} is not resumed: this runner predates lease epochs, so its writes could not be told from those of the process that died; it gives the run back, retried in a new attempt (upgrade the runner to resume runs in place)`,
          'body.fencing',
        );
      }
      const answer = await resumeLeasedRun({
        db: context.db,
        runId,
        leaseId: body.lease,
        runnerName: runner.name,
        leaseTtlMs: context.settings.leaseTtlMs,
      });
      if (!answer.resumed) {
        request.log.info({ runId, runner: runner.name, why: answer.why }, 'run not resumed');
        if (answer.why === 'not-held') throw noSuchRun(runId);
        if (answer.why === 'lease-stale') throw staleLease(runId);
        throw new HttpError(
          409,
          `lease: run ${runId} has a cancel pending, so it is not resumed; release it under this lease to end it as the cancel asked`,
          'lease',
        );
      }
      const { run, nextSeq, finished } = answer;
      const started = run.startedAt !== null;
      let extraHeader: string | null = null;
      if (!started) {
        try {
          extraHeader = (await context.gitCredentials?.forRun(run)) ?? null;
        } catch (error) {
          // Retried by the runner; a credential refused for good leaves the run to the
          // sweeper, which takes it back when the lease (renewed above once) expires.
          request.log.error({ err: error, runId }, 'could not mint the fetch credential of a resumed run');
          throw new HttpError(503, `Could not get a token to fetch ${run.repository}; try again shortly`);
        }
      }
      request.log.info(
        { runId, runner: runner.name, attempt: run.attempt, epoch: run.leaseEpoch, started, nextSeq },
        'run resumed',
      );
      context.onRunChanged?.(runId);
      return {
        claim: toClaim(run, context.settings.heartbeatIntervalMs, extraHeader),
        started,
        nextSeq,
        epoch: run.leaseEpoch,
        finished,
      };
    },
  );
}
