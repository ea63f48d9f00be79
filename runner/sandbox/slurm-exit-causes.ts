import type { JobEnd } from './job-status-line.js';
import { describeUnstartable } from './slurm-unstartable.js';

/**
 * The Slurm job states that end a job otherwise than by its command's exit, each with the
 * exit code its attach process (slurm-attach-script.ts) ends with and the sentence the
 * stage's error says. The attach script's `case` is written from this table, so the two
 * cannot disagree. CANCELLED is a cancel from outside fluksio: fluksio's own (the run
 * cancelled or timed out) exits 130 and reads as the run's cancel.
 *
 * The codes only make the stage fail: a job's own command can exit with any of them, so
 * the cause is never read from one. The attach process says the state on its descriptor 3
 * (`ended JOB STATE`, job-status-line.ts), which the job cannot write, and that is what
 * slurmExitCause names.
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

/** What the attach process reports for a job Slurm requeued (or preempted back into its queue). */
export const REQUEUED_END = 'REQUEUED';
/** The exit code it ends with then. */
export const REQUEUED_EXIT_CODE = 75;

/**
 * What the attach process reports for a job that squeue, sacct and scontrol all stopped
 * knowing for its grace period (purged from slurmctld's memory, MinJobAge, on a cluster
 * without accounting, before its end was seen).
 */
export const UNKNOWN_JOB_END = 'UNKNOWN';
/** The exit code it ends with then. */
export const UNKNOWN_JOB_EXIT_CODE = 217;

/**
 * Jobs whose end is no fault of the run (requeued, preempted): the run goes back to the
 * queue for another attempt, where the stages already finished come from the cache.
 */
const GIVEN_BACK_ENDS: readonly string[] = [REQUEUED_END, 'PREEMPTED'];

/**
 * Why Slurm ended a stage's job, would not queue it (sbatch's errors) or would never start
 * it (the attach process cancelled it), naming the cause,
 * as its attach process reported it;
 * null for a job its own command ended (whatever its exit code), or an unknown report.
 */
export function slurmExitCause({ job, endedBy, refused, unstartable }: JobEnd): string | null {
  if (refused) return `Slurm refused the job (sbatch): ${refused}`;
  if (unstartable) return describeUnstartable(job, unstartable);
  if (endedBy === REQUEUED_END) return 'Slurm requeued the job';
  if (endedBy === UNKNOWN_JOB_END) {
    return `Slurm no longer knows ${job === null ? 'the job' : `job ${job}`} (squeue, sacct and scontrol lost it before it was seen to end)`;
  }
  const states: Readonly<Record<string, { cause: string }>> = SLURM_END_STATES;
  return endedBy !== null && Object.hasOwn(states, endedBy) ? (states[endedBy]?.cause ?? null) : null;
}

/** Whether Slurm ended the job by no fault of the run (requeued, preempted), as reported. */
export function slurmGivesBack({ endedBy }: JobEnd): boolean {
  return endedBy !== null && GIVEN_BACK_ENDS.includes(endedBy);
}
