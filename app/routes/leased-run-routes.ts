import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { digestOf } from '../../core/canonical-json.js';
import {
  EVENT_BATCH_MAX_BYTES,
  EventBatch,
  FINISH_MAX_BYTES,
  FinishRequest,
  HeartbeatRequest,
  ReleaseRequest,
  StartRequest,
  type EventBatchReply,
  type StartReply,
  type HeartbeatReply,
} from '../../schemas/protocol/lease-requests.js';
import type { LeasedWriteReply } from '../../schemas/protocol/leased-write-reply.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Run } from '../../schemas/tables/runs.js';
import { applyLeasedEvents } from '../../store/events/apply-leased-events.js';
import { finishLeasedRun } from '../../store/leases/finish-leased-run.js';
import { fixRunBaseline } from '../../store/runs/fix-run-baseline.js';
import { heartbeatRun } from '../../store/leases/heartbeat-run.js';
import { releaseLeasedRun } from '../../store/leases/release-leased-run.js';
import { startLeasedRun } from '../../store/leases/start-leased-run.js';
import { checkNamedBlobs } from '../blobs/check-named-blobs.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { holdLease, staleLease } from '../http/hold-lease.js';
import { HttpError } from '../http/http-error.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdParams } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';

/**
 * The writes a runner makes to the run it holds: heartbeat, start, events, finish and
 * release. Each carries the run's lease in its body, and its epoch once the run was
 * resumed after a restart: another runner's run is 404 (as if unknown), a stale lease or
 * epoch 409 with nothing changed (DESIGN §6).
 */
export function leasedRunRoutes(app: FastifyInstance, context: RouteContext): void {
  const { db } = context;
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(db, request, context.settings.onlineWindowMs),
  );
  // The other writes are a lease and a sentence: the server's default body limit holds them.
  const { onRequest } = runnerAuth;

  /** The runner, the run id and the validated body of a leased write, once the lease is shown held. */
  async function leasedWrite<Schema extends z.ZodType<{ lease: string; epoch: number }>>(
    request: FastifyRequest,
    schema: Schema,
  ): Promise<{ runner: RunnerRow; runId: string; run: Run; body: z.output<Schema> }> {
    const runner = runnerAuth.of(request);
    const { id: runId } = parseInput(RunIdParams, request.params, 'id');
    const body = parseInput(schema, request.body, 'body');
    const run = await holdLease({ db, runner, runId, lease: body.lease, epoch: body.epoch });
    return { runner, runId, run, body };
  }

  app.post('/api/v1/runs/:id/heartbeat', { onRequest }, async (request): Promise<HeartbeatReply> => {
    const { runId, body } = await leasedWrite(request, HeartbeatRequest);
    const answer = await heartbeatRun({
      db,
      runId,
      leaseId: body.lease,
      leaseEpoch: body.epoch,
      leaseTtlMs: context.settings.leaseTtlMs,
    });
    if (!answer) throw staleLease(runId);
    if (answer.cancel) request.log.info({ runId, reason: answer.reason }, 'runner told to stop the run');
    return answer;
  });

  app.post('/api/v1/runs/:id/start', { onRequest }, async (request): Promise<StartReply> => {
    const { runId, body } = await leasedWrite(request, StartRequest);
    if (digestOf(body.params) !== body.paramsDigest)
      throw new HttpError(
        400,
        'body.paramsDigest: must be the sha256 of the canonical JSON of params',
        'body.paramsDigest',
      );
    const run = await startLeasedRun({
      db,
      runId,
      leaseId: body.lease,
      leaseEpoch: body.epoch,
      codeDigest: body.codeDigest,
      envDigest: body.envDigest,
      params: body.params,
      paramsDigest: body.paramsDigest,
      sandbox: body.sandbox,
    });
    if (!run) throw staleLease(runId);
    if (run.status === 'running') request.log.info({ runId }, 'run started');
    else request.log.error({ runId, status: run.status, reason: run.statusReason }, 'run not started');
    context.onRunChanged?.(runId);
    return { status: run.status, reason: run.statusReason };
  });

  app.post(
    '/api/v1/runs/:id/events',
    { onRequest, bodyLimit: EVENT_BATCH_MAX_BYTES },
    async (request): Promise<EventBatchReply> => {
      const { runId, run, body } = await leasedWrite(request, EventBatch);
      // A stage names only blobs its repository stored: else 422, and nothing is applied.
      await checkNamedBlobs({ db, blobs: context.blobs, repository: run.repository, events: body.events });
      const result = await applyLeasedEvents({
        db,
        runId,
        leaseId: body.lease,
        leaseEpoch: body.epoch,
        attempt: body.attempt,
        events: body.events,
        maxStageLogBytes: context.settings.maxStageLogBytes,
      });
      if (!result) throw staleLease(runId);
      request.log.debug({ runId, applied: result.applied, acked: result.acked }, 'run events applied');
      // A stage starting or finishing changes the check run; log lines and points do not,
      // but the run's open pages show them.
      if (
        result.applied > 0 &&
        body.events.some((event) => event.type.startsWith('stage.') && event.type !== 'stage.log')
      ) {
        context.onRunChanged?.(runId);
      } else if (result.applied > 0) void context.runBell.ring(runId);
      return result;
    },
  );

  app.post('/api/v1/runs/:id/finish', { onRequest, bodyLimit: FINISH_MAX_BYTES }, async (request) => {
    const { runId, body } = await leasedWrite(request, FinishRequest);
    const run = await finishLeasedRun({
      db,
      runId,
      leaseId: body.lease,
      leaseEpoch: body.epoch,
      status: body.status,
      reason: body.reason,
      metrics: body.metrics,
      dirtyReasons: body.dirtyReasons,
    });
    if (!run) throw staleLease(runId);
    await fixRunBaseline({ db, run });
    request.log.info({ runId, status: run.status }, 'run finished');
    context.onRunChanged?.(runId);
    return { status: run.status } satisfies LeasedWriteReply;
  });

  app.post('/api/v1/runs/:id/release', { onRequest }, async (request) => {
    const { runId, body } = await leasedWrite(request, ReleaseRequest);
    const run = await releaseLeasedRun({
      db,
      runId,
      leaseId: body.lease,
      leaseEpoch: body.epoch,
      reason: body.reason,
    });
    if (!run) throw staleLease(runId);
    request.log.info({ runId, status: run.status, reason: body.reason }, 'run released');
    context.onRunChanged?.(runId);
    await context.doorbell.ring();
    return { status: run.status } satisfies LeasedWriteReply;
  });
}
