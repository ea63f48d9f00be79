import type { Claim } from '../schemas/protocol/claim.js';
import type { Run } from '../schemas/tables/runs.js';

/**
 * The claim a runner receives for a run it was just given (DESIGN §6): what to fetch and
 * run, the lease every later write must carry, and how often to heartbeat. `extraHeader`
 * is the fetch's credential (an installation token minted for this claim), or null.
 */
export function toClaim(run: Run, heartbeatIntervalMs: number, extraHeader: string | null = null): Claim {
  if (run.commit === null || run.leaseId === null || run.cloneUrl === null) {
    throw new Error(`Run ${run.id} was claimed without a commit, a lease or a clone URL`);
  }
  return {
    run: {
      id: run.id,
      attempt: run.attempt,
      params: run.params,
      pipelinePath: run.pipelinePath,
      noCache: run.noCache,
      trustDomain: run.trustDomain,
      labels: run.labels,
      timeoutMs: run.timeoutMs,
    },
    repo: {
      repository: run.repository,
      cloneUrl: run.cloneUrl,
      fetchRef: run.fetchRef,
      fork: run.fork,
    },
    commit: run.commit,
    lease: run.leaseId,
    git: { extraHeader },
    heartbeatIntervalMs,
  };
}
