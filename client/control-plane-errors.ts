/**
 * The control plane refused a request (a 4xx, or a reply that does not match the
 * protocol). The message names the request and repeats the control plane's sentence;
 * it never holds the runner token, which only ever travels in the Authorization header.
 */
export class ControlPlaneError extends Error {
  constructor(
    /** The HTTP status, or 0 when the reply, not the status, was wrong. */
    readonly status: number,
    /** `POST /api/v1/runs/<id>/heartbeat`: what was asked. */
    readonly request: string,
    message: string,
    /** The input the control plane named as wrong, when it named one. */
    readonly field?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ControlPlaneError';
  }
}

/** 401: the runner token is wrong or revoked. Nothing this runner asks will succeed. */
export class UnauthorizedError extends ControlPlaneError {
  override name = 'UnauthorizedError';
}

/** 403: the run is not this runner's (another runner holds it, or it never did). */
export class ForbiddenError extends ControlPlaneError {
  override name = 'ForbiddenError';
}

/** 404: the control plane does not know the run. */
export class NotFoundError extends ControlPlaneError {
  override name = 'NotFoundError';
}

/**
 * 409: the lease is stale (DESIGN §6) — the run was abandoned, released or finished and
 * may already be another runner's. The write changed nothing, and nothing more may be written.
 */
export class StaleLeaseError extends ControlPlaneError {
  override name = 'StaleLeaseError';
}

/**
 * The control plane and this fluksio speak protocols neither can bridge: it answered 426
 * (it no longer, or not yet, speaks this client's protocol), or its answer names an older
 * protocol than this client needs. The message says which side to upgrade. Asking again
 * changes nothing: a runner stops, a command exits.
 */
export class ProtocolMismatchError extends ControlPlaneError {
  override name = 'ProtocolMismatchError';
}

/** The control plane could not be reached (refused, reset, timed out, 5xx, 429) after every retry. */
export class ControlPlaneUnreachableError extends Error {
  constructor(
    readonly request: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ControlPlaneUnreachableError';
  }
}

/**
 * Whether an error means this runner no longer holds the run: a stale lease, a run
 * that is not (or no longer) its own, or one the control plane does not know. The
 * runner then stops the run and writes nothing more for it.
 */
export function isLeaseLost(error: unknown): boolean {
  return (
    error instanceof StaleLeaseError || error instanceof ForbiddenError || error instanceof NotFoundError
  );
}

/**
 * Whether an error means nothing this client asks can succeed, however often it asks: the
 * token is refused, or the control plane speaks another protocol. A runner then stops.
 */
export function refusesEveryRequest(error: unknown): error is UnauthorizedError | ProtocolMismatchError {
  return error instanceof UnauthorizedError || error instanceof ProtocolMismatchError;
}
