import { z } from 'zod';

/**
 * What a stage executed as a Slurm job used (issue 12): CPU- and GPU-seconds, from the
 * cluster's accounting (`sacct`: CPUTimeRAW, and AllocTRES' GPUs × ElapsedRaw) where it
 * keeps one and has recorded the job's end, else from the job's allocation (`scontrol show
 * job`: its CPUs and GPUs) times its elapsed time. A run's hours are the sum over its stages' jobs, attempts
 * included: a job requeued half-way cost what it ran.
 */
export const StageUsage = z.strictObject({
  /** The Slurm job id (`123`, or `123_4` for an array task). */
  job: z.string().regex(/^[0-9]+(_[0-9]+)?$/),
  cpuSeconds: z.number().finite().nonnegative(),
  gpuSeconds: z.number().finite().nonnegative(),
  /** Where the figures come from: the cluster's accounting, or allocation × elapsed. */
  source: z.enum(['sacct', 'allocation']),
});
export type StageUsage = z.infer<typeof StageUsage>;
