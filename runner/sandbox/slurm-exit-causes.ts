/**
 * The Slurm job states that end a job otherwise than by its command's exit, each with the
 * exit code its attach process (slurm-attach-script.ts) ends with and the sentence the
 * stage's error says. The attach script's `case` is written from this table, so the two
 * cannot disagree. CANCELLED is a cancel from outside fluksio: fluksio's own (the run
 * cancelled or timed out) exits 130 and reads as the run's cancel.
 */
export const SLURM_END_STATES = {
  CANCELLED: { code: 210, cause: 'Slurm cancelled the job (scancel from outside fluksio)' },
  TIMEOUT: { code: 211, cause: 'Slurm ended the job: TIMEOUT (it ran past its time limit)' },
  OUT_OF_MEMORY: {
    code: 212,
    cause: 'Slurm ended the job: OUT_OF_MEMORY (it used more than its memory)',
  },
  NODE_FAIL: { code: 213, cause: 'Slurm ended the job: NODE_FAIL (its node failed)' },
  PREEMPTED: {
    code: 214,
    cause: 'Slurm ended the job: PREEMPTED (another job took its resources)',
  },
  BOOT_FAIL: { code: 215, cause: 'Slurm ended the job: BOOT_FAIL (its node did not boot)' },
  DEADLINE: { code: 216, cause: 'Slurm ended the job: DEADLINE (it could not end before its deadline)' },
} as const satisfies Record<string, { code: number; cause: string }>;

/**
 * The states of a Slurm job that is over: its command's own end (COMPLETED, FAILED) and
 * SLURM_END_STATES'. Any other (PENDING, RUNNING, COMPLETING, REQUEUED, SUSPENDED, …) may
 * still change, and in `sacct` may only mean that the end has not reached the accounting yet.
 */
export const SLURM_FINAL_STATES: readonly string[] = [
  'COMPLETED',
  'FAILED',
  ...Object.keys(SLURM_END_STATES),
];

/**
 * Whether the accounting's record of a job (`sacct`'s State and End) is final: the job over
 * (sacct's `CANCELLED by 0` is CANCELLED) and its end recorded. A record whose end has not
 * reached slurmdbd yet may already show the state its steps ended in: `FAILED`, End
 * `Unknown`, exit code `0:0`, its Elapsed still growing (seen as slurmctld caught up with a
 * restarted slurmdbd).
 */
export function isFinalSlurmRecord(state: string, end: string): boolean {
  return SLURM_FINAL_STATES.includes(state.split(' ')[0] ?? '') && end !== '' && end !== 'Unknown';
}

/** The exit code of a job Slurm requeued (or preempted back into its queue): try the run again. */
export const REQUEUED_EXIT_CODE = 75;

/**
 * The exit code of a job that squeue, sacct and scontrol all stopped knowing for the
 * attach process's grace period (purged from slurmctld's memory, MinJobAge, on a cluster
 * without accounting, before its end was seen).
 */
export const UNKNOWN_JOB_EXIT_CODE = 217;

/**
 * Jobs whose end is no fault of the run (requeued, preempted): the run goes back to the
 * queue for another attempt, where the stages already finished come from the cache.
 */
export const GIVEN_BACK_EXIT_CODES: readonly number[] = [REQUEUED_EXIT_CODE, SLURM_END_STATES.PREEMPTED.code];

/**
 * Why a Slurm stage's attach process exited with `exitCode`, naming the cause; null for
 * an exit code of the job's own command. `job` is the job it followed, when known.
 */
export function slurmExitCause(exitCode: number, job: string | null): string | null {
  if (exitCode === REQUEUED_EXIT_CODE) return 'Slurm requeued the job';
  if (exitCode === UNKNOWN_JOB_EXIT_CODE) {
    return `Slurm no longer knows ${job === null ? 'the job' : `job ${job}`} (squeue, sacct and scontrol lost it before it was seen to end)`;
  }
  return Object.values(SLURM_END_STATES).find((end) => end.code === exitCode)?.cause ?? null;
}
