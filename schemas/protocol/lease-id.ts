import { z } from 'zod';
import { INT32_MAX } from '../int32.js';

/** The fencing token of one claim (DESIGN §6): 32 random bytes, hex. */
export const LeaseId = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: 'expected the lease id this run was claimed with' });
export type LeaseId = z.infer<typeof LeaseId>;

/**
 * The epoch of the lease a write is made under: 0 from the claim, then the `epoch` of the
 * runner's last resume after a restart (resume-run.ts). A write that changes the run's
 * state under an older epoch is refused as stale (409): it comes from the process that
 * died. Left out, it is 0: a runner that never resumed the run need not send it.
 */
export const LeaseEpoch = z.number().int().nonnegative().max(INT32_MAX).default(0);
