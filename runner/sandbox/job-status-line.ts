import { JobPending } from '../../schemas/job-pending.js';
import type { Unstartable } from './slurm-unstartable.js';

/** What a launched stage's batch job is doing, as its attach process reports it. */
export interface JobStatus {
  /** The job it follows; null when there is none: the batch system refused to queue it (`refused`). */
  job: string | null;
  /** Why the job waits in the queue; null when it does not (it was just submitted, it runs, it ended). */
  pending: JobPending | null;
  /**
   * What ended the job when the batch system did rather than its command's exit: a word of
   * the launcher's (Slurm's job state, `TIMEOUT`, or `REQUEUED`, `UNKNOWN`; see
   * slurm-exit-causes.ts). Only on the last status of a job so ended.
   */
  endedBy?: string;
  /**
   * Why the batch system refused to queue the job, in its words (sbatch's errors: a partition
   * that does not exist, more GPUs than any node has). Only on the one status saying so.
   */
  refused?: string;
  /**
   * Why the batch system would never start the job, which the attach process therefore
   * cancelled (slurm-unstartable.ts). Only on the last status of a job so ended.
   */
  unstartable?: Unstartable;
}

/** The longest refusal a status line carries: sbatch's errors, joined, cut there. */
const REFUSAL_MAX = 500;

/**
 * How a launch's batch job ended, as its attach process last reported it: what the engine
 * asks the launcher to explain a failed stage by (StageLauncher.explainExit). The launched
 * program's exit code is not part of it: a job's own command can exit with any code.
 */
export interface JobEnd {
  /** The job it last reported following; null before any (or for no job). */
  job: string | null;
  /** JobStatus.endedBy of the job's last status; null when its command's exit ended it. */
  endedBy: string | null;
  /** JobStatus.refused: why the batch system refused to queue the job; null or absent when it did not. */
  refused?: string | null;
  /** JobStatus.unstartable: why the job would never have started; null or absent when it could. */
  unstartable?: Unstartable | null;
}

/**
 * One line an attach process writes on its descriptor 3 (slurm-attach-script.ts): `job ID`
 * (it follows job ID, which is not waiting), `pending ID REASON` (Slurm keeps it waiting
 * for REASON, the rest of the line), `ended ID CAUSE` (the batch system ended it, CAUSE
 * one upper-case word), `unstartable ID REASON FACT…` (the attach process cancelled the job,
 * which Slurm would never start for REASON, a word; each FACT `job.FIELD=VALUE` or
 * `partition.FIELD=VALUE` as scontrol said it) or `refused TEXT` (the batch system would not queue the job: TEXT,
 * the rest of the line, says why, cut at REFUSAL_MAX characters). Null for anything else: the line comes from another process, and
 * what it says is checked as any input is. Only fluksio's attach process holds this
 * descriptor; the job's command, run by Slurm, writes to files the attach process copies
 * to its stdout and stderr, never here.
 */
export function parseJobStatusLine(line: string): JobStatus | null {
  const [verb, job = '', ...words] = line.trim().split(' ');
  if (verb === 'job' && words.length === 0) {
    return JobPending.shape.job.safeParse(job).success ? { job, pending: null } : null;
  }
  if (verb === 'ended') {
    const [endedBy = '', ...rest] = words;
    const valid = JobPending.shape.job.safeParse(job).success && /^[A-Z_]{1,40}$/.test(endedBy);
    return valid && rest.length === 0 ? { job, pending: null, endedBy } : null;
  }
  if (verb === 'refused') {
    const refused = [job, ...words].join(' ').trim().slice(0, REFUSAL_MAX);
    return refused === '' ? null : { job: null, pending: null, refused };
  }
  if (verb === 'unstartable') return parseUnstartable(job, words);
  if (verb !== 'pending') return null;
  const pending = JobPending.safeParse({ job, reason: words.join(' ') });
  return pending.success ? { job, pending: pending.data } : null;
}

/** The `unstartable ID REASON FACT…` line's status; null when any part is malformed. */
function parseUnstartable(job: string, words: readonly string[]): JobStatus | null {
  const [reason = '', ...facts] = words;
  if (!JobPending.shape.job.safeParse(job).success || !/^[A-Za-z_]{1,60}$/.test(reason)) return null;
  const unstartable = { reason, job: {} as Record<string, string>, partition: {} as Record<string, string> };
  for (const fact of facts) {
    const match = /^(job|partition)\.([A-Za-z/]{1,40})=(\S{0,200})$/.exec(fact);
    if (!match) return null;
    const [, owner = 'job', field = '', value = ''] = match;
    (owner === 'job' ? unstartable.job : unstartable.partition)[field] = value;
  }
  return { job, pending: null, unstartable };
}
