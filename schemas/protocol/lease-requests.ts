import { z } from 'zod';
import { INT32_MAX } from '../int32.js';
import { ParamValue } from '../key-inputs.js';
import { RunStatus } from '../statuses.js';
import { RunEvent } from '../run-event.js';
import { LeaseEpoch, LeaseId } from './lease-id.js';

/** `POST /api/v1/runs/:id/heartbeat`. */
export const HeartbeatRequest = z.strictObject({ lease: LeaseId, epoch: LeaseEpoch });
export type HeartbeatRequest = z.input<typeof HeartbeatRequest>;

/**
 * Whether the runner must stop the run now, why, and the state to finish it in: a user's
 * cancel is `cancelled`, the run's time limit `timed_out`.
 */
export const HeartbeatReply = z.strictObject({
  cancel: z.boolean(),
  reason: z.string().nullable(),
  finishAs: z.enum(['cancelled', 'timed_out']).nullable(),
});
export type HeartbeatReply = z.infer<typeof HeartbeatReply>;

/**
 * `POST /api/v1/runs/:id/start`: the checkout is verified and the run begins, stamped
 * where it executes (DESIGN §5). A run claimed but never started goes back to the queue.
 * The params are those the runner resolved against the pipeline at the commit, the ones
 * its stages get: the control plane fails the run when they are not the params it was
 * queued with (params-mismatch.ts), and otherwise records them, so the run shows what ran.
 */
export const StartRequest = z.strictObject({
  lease: LeaseId,
  epoch: LeaseEpoch,
  codeDigest: z.string().regex(/^[0-9a-f]{64}$/),
  envDigest: z.string().regex(/^[0-9a-f]{64}$/),
  params: z.record(z.string().max(200), ParamValue).refine((params) => Object.keys(params).length <= 500, {
    error: 'must hold at most 500 params',
  }),
  /**
   * The digest of `params` (canonical JSON), as the runner's stamp holds it; the route
   * refuses one that is not (a schema cannot compute it: canonical JSON is in core/).
   */
  paramsDigest: z.string().regex(/^[0-9a-f]{64}$/),
  /**
   * How the runner isolates the run's stages, in a sentence for the check run (`bubblewrap
   * 0.8.0: …`); null when they run unsandboxed, as the runner's own user.
   */
  sandbox: z
    .string()
    .max(500)
    .regex(/^[^\p{Cc}]*$/u, 'must hold no control characters')
    .nullable()
    .default(null),
});
export type StartRequest = z.infer<typeof StartRequest>;
/** What a runner sends: `sandbox` may be left out by a runner that predates it, `epoch` when 0. */
export type StartRequestInput = z.input<typeof StartRequest>;

/**
 * The run as the start left it: `running`, or `failed` with the reason when the params the
 * runner resolved are not those the run was queued with (then nothing may run).
 */
export const StartReply = z.strictObject({
  status: RunStatus,
  reason: z.string().nullable(),
});
export type StartReply = z.infer<typeof StartReply>;

/**
 * The largest event batch the control plane reads, in bytes of JSON: a runner sends
 * batches of at most half this (a single larger event goes alone, and a log line is at
 * most 1 MiB of text, ~6 MiB as escaped JSON).
 */
export const EVENT_BATCH_MAX_BYTES = 8 * 2 ** 20;

/** `POST /api/v1/runs/:id/events`: applied once per `(run, attempt, seq)`. */
export const EventBatch = z.strictObject({
  lease: LeaseId,
  epoch: LeaseEpoch,
  attempt: z.number().int().positive().max(INT32_MAX),
  events: z.array(RunEvent).min(1).max(2000),
});
export type EventBatch = z.input<typeof EventBatch>;

export const EventBatchReply = z.strictObject({
  /** How many events of the batch were new (the rest had been applied before). */
  applied: z.number().int().nonnegative(),
  acked: z.number().int().nonnegative(),
});
export type EventBatchReply = z.infer<typeof EventBatchReply>;

/** The largest finish request the control plane reads: a reason and the run's metric values. */
export const FINISH_MAX_BYTES = 2 ** 20;

/** `POST /api/v1/runs/:id/finish`. */
export const FinishRequest = z.strictObject({
  lease: LeaseId,
  epoch: LeaseEpoch,
  status: z.enum(['succeeded', 'failed', 'cancelled', 'timed_out']),
  reason: z.string().max(4000).nullable(),
  metrics: z.record(z.string(), z.number()),
  /** What changed in the code while stages ran (the run is then dirty); none when absent. */
  dirtyReasons: z.array(z.string().max(2000)).max(100).default([]),
});
export type FinishRequest = z.infer<typeof FinishRequest>;

/** `POST /api/v1/runs/:id/release`: the runner stops (SIGTERM) and gives the run back. */
export const ReleaseRequest = z.strictObject({
  lease: LeaseId,
  epoch: LeaseEpoch,
  reason: z.string().max(1000),
});
export type ReleaseRequest = z.input<typeof ReleaseRequest>;

/**
 * `POST /api/v1/runs/:id/fetched`: the runner fetched the run's commit, so the git
 * credential the claim carried is revoked now rather than left until it expires. The
 * runner passes the claim's `git.extraHeader` back: the control plane keeps no copy of it.
 */
export const FetchedRequest = z.strictObject({
  lease: LeaseId,
  extraHeader: z.string().max(4000),
});
export type FetchedRequest = z.infer<typeof FetchedRequest>;

export const FetchedReply = z.strictObject({
  /** Whether a credential was revoked (false when there was none to revoke). */
  revoked: z.boolean(),
});
export type FetchedReply = z.infer<typeof FetchedReply>;
