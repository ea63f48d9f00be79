/** The run a request is about and the lease it is written under. */
export interface RunLease {
  runId: string;
  lease: string;
  /**
   * The lease's epoch: the `epoch` of the run's last resume after a restart, carried by
   * the writes that change the run's state (heartbeat, start, events, finish, release).
   * @defaultValue 0, the claim's
   */
  epoch?: number;
}

/**
 * The lease a write that changes the run's state carries: the epoch only once the run was
 * resumed, so a runner that never was speaks as one that predates epochs, to any control plane.
 */
export function fenceOf(run: RunLease): { lease: string; epoch?: number } {
  return run.epoch ? { lease: run.lease, epoch: run.epoch } : { lease: run.lease };
}
