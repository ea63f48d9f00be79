import { JobPending } from '../../schemas/job-pending.js';

/** What a launched stage's batch job is doing, as its attach process reports it. */
export interface JobStatus {
  /** The job it follows. */
  job: string;
  /** Why the job waits in the queue; null when it does not (it was just submitted, or it runs). */
  pending: JobPending | null;
}

/**
 * One line an attach process writes on its descriptor 3 (slurm-attach-script.ts): `job ID`
 * (it follows job ID, which is not waiting) or `pending ID REASON` (Slurm keeps it waiting
 * for REASON, the rest of the line). Null for anything else: the line comes from another
 * process, and what it says is checked as any input is.
 */
export function parseJobStatusLine(line: string): JobStatus | null {
  const [verb, job = '', ...words] = line.trim().split(' ');
  if (verb === 'job' && words.length === 0) {
    return JobPending.shape.job.safeParse(job).success ? { job, pending: null } : null;
  }
  if (verb !== 'pending') return null;
  const pending = JobPending.safeParse({ job, reason: words.join(' ') });
  return pending.success ? { job, pending: pending.data } : null;
}
