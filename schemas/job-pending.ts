import { z } from 'zod';

/**
 * Why a stage's batch job waits in its scheduler's queue (issue 12): the Slurm job id and
 * Slurm's reason code as `squeue` prints it (`Resources`, `Priority`, `JobHeldUser`). A
 * stage carries one while its job is pending, and none once the job runs or ends.
 */
export const JobPending = z.strictObject({
  /** The Slurm job id (`123`, or `123_4` for an array task). */
  job: z.string().regex(/^[0-9]+(_[0-9]+)?$/),
  /** Slurm's reason, verbatim and bounded: what people compare with `squeue`. */
  reason: z.string().min(1).max(200),
});
export type JobPending = z.infer<typeof JobPending>;
