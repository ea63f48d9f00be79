import { and, eq, type SQL } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';

/** The lease a runner's write is made under: the claim's id, and the epoch its last resume gave. */
export interface LeaseFence {
  runId: string;
  leaseId: string;
  /**
   * The run's lease epoch the writer holds: 0 from the claim, the resume's reply after a
   * restart (resume-leased-run.ts). @defaultValue 0
   */
  leaseEpoch?: number;
}

/**
 * The condition that run `runId` is held under `leaseId` at `leaseEpoch`: the fence every
 * write that changes a run's state puts in the statement that makes it (DESIGN §6). The
 * lease id tells one claim from the next; the epoch tells the process that resumed the
 * run after a restart from the one that died, whose requests may still be in flight.
 */
export function heldUnderLease({ runId, leaseId, leaseEpoch = 0 }: LeaseFence): SQL {
  return and(eq(runs.id, runId), eq(runs.leaseId, leaseId), eq(runs.leaseEpoch, leaseEpoch)) as SQL;
}
