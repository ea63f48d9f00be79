import path from 'node:path';

/**
 * Where a Slurm runner keeps one attempt's jobs (their ids and output files): in its work
 * directory, by run and attempt — never in the checkout, which the next checkout cleans —
 * so a runner restarted mid-run finds the jobs of the attempt it resumes, and cancels
 * those of attempts that were superseded.
 */
export function slurmJobDir(workDir: string, runId: string, attempt: number): string {
  return path.join(slurmJobsRoot(workDir), runId, String(attempt));
}

/** The directory under which every run's `slurmJobDir` is. */
export function slurmJobsRoot(workDir: string): string {
  return path.join(workDir, 'slurm');
}
