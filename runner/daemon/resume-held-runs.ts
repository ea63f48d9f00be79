import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { ControlPlaneError, refusesEveryRequest } from '../../client/control-plane-errors.js';
import { cancelJobsOfRuns } from './cancel-jobs-of-runs.js';
import type { HeldRun, HeldRuns } from './held-runs.js';
import { attemptJobs } from './slurm-attempt-jobs.js';
import { slurmJobDir } from './slurm-job-dir.js';

/** A run the control plane let this runner go on with, in the attempt it held. */
export interface ResumedRun {
  claim: Claim;
  /** The concurrency slot it held: its checkout, where its jobs run, is that slot's. */
  slot: number;
  /** Whether the run had started; one that had not is checked out anew. */
  started: boolean;
  /** The seq the attempt's next event carries. */
  nextSeq: number;
  /** The lease's epoch from this resume: the run's writes carry it. */
  epoch: number;
  /** The stages that finished in the attempt before the restart: kept, not run again. */
  finished: StageRecord[];
}

export interface ResumeHeldRunsOptions {
  client: ControlPlaneClient;
  heldRuns: HeldRuns;
  /** The runner's work directory (real): the runs' Slurm jobs are kept under it. */
  workDir: string;
  /**
   * Whether this runner can go on with a run where it was left: a Slurm runner
   * re-attaches to the jobs still running. A runner started with another backend gives
   * the runs a Slurm runner left back instead.
   */
  canResume: boolean;
  logger: Logger;
  /** Aborted when the runner stops: the runs not asked about yet stay recorded. */
  signal: AbortSignal;
  /** The longest wait between two tries while the control plane is unreachable. */
  maxBackoffMs: number;
  /**
   * Called as soon as a run is resumed, before the others are asked about: the run is
   * executed (its lease heartbeated) from then on, not once every record was asked about.
   * @defaultValue none
   */
  onResumed?: (run: ResumedRun) => void;
}

/**
 * What a runner does at start-up, before it claims anything (issue 12): it asks the
 * control plane to resume each run its work directory records as held (held-runs.ts),
 * under the lease recorded. A run resumed is returned, to be executed again in the same
 * attempt: the stages that finished keep their records (not run again), and a stage whose
 * Slurm job still runs re-attaches to it. A run refused (its lease swept, the run finished or cancelled,
 * another runner's) has its jobs cancelled and is given back when its lease is still held
 * (a cancel pending then ends it as asked, at once rather than at the lease's expiry), and
 * is forgotten. Last, the jobs of every run not resumed are cancelled, so no job is left
 * that no runner follows. While the control plane is unreachable it is asked again, ever
 * later; a runner token it refuses, or a protocol it does not speak, rejects
 * (refusesEveryRequest), leaving every record and job for the next start.
 */
export async function resumeHeldRuns(options: ResumeHeldRunsOptions): Promise<ResumedRun[]> {
  const { heldRuns, logger } = options;
  const { held, unreadable } = await heldRuns.list();
  for (const problem of unreadable) logger.warn({ problem }, 'a held-run record could not be read: removed');
  const resumed: ResumedRun[] = [];
  for (const run of held) {
    if (options.signal.aborted) return resumed;
    const runLogger = logger.child({ run: run.runId });
    const answer = options.canResume
      ? await askToResume(options, run, runLogger)
      : { refused: 'this runner no longer runs stages as Slurm jobs, so it cannot re-attach to them' };
    if (answer === null) return resumed;
    if ('refused' in answer) {
      await giveUp(options, run, answer.refused, runLogger);
      continue;
    }
    const jobs = await attemptJobs(slurmJobDir(options.workDir, run.runId, run.attempt));
    runLogger.info(
      { attempt: run.attempt, started: answer.started, slurmJobs: jobs },
      jobs.length > 0
        ? `resumed the run in attempt ${run.attempt}, re-attaching to Slurm job${jobs.length > 1 ? 's' : ''} ${jobs.join(', ')}`
        : `resumed the run in attempt ${run.attempt}`,
    );
    const taken = { ...answer, slot: run.slot };
    resumed.push(taken);
    options.onResumed?.(taken);
  }
  const kept = new Set(resumed.map((run) => run.claim.run.id));
  const orphans = await cancelJobsOfRuns(options.workDir, (runId) => !kept.has(runId), logger);
  if (orphans.length > 0) {
    logger.info({ jobs: orphans }, 'cancelled the Slurm jobs of runs this runner does not resume');
  }
  return resumed;
}

/** The control plane's answer: the run to go on with, why not, or null once the runner stops. */
async function askToResume(
  options: ResumeHeldRunsOptions,
  run: HeldRun,
  logger: Logger,
): Promise<Omit<ResumedRun, 'slot'> | { refused: string } | null> {
  const lease: RunLease = { runId: run.runId, lease: run.lease, epoch: run.epoch };
  for (let failures = 1; !options.signal.aborted; failures += 1) {
    try {
      const reply = await options.client.resume(lease, { signal: options.signal });
      if (reply.claim.run.attempt !== run.attempt || reply.claim.lease !== run.lease) {
        return { refused: `the control plane answered for attempt ${reply.claim.run.attempt}` };
      }
      return {
        claim: reply.claim,
        started: reply.started,
        nextSeq: reply.nextSeq,
        epoch: reply.epoch,
        finished: reply.finished,
      };
    } catch (error) {
      if (options.signal.aborted) return null;
      if (refusesEveryRequest(error)) throw error;
      // Any other refusal is for good: a lease gone, a cancel pending, a request it cannot take.
      if (error instanceof ControlPlaneError) return { refused: error.message };
      const delay =
        Math.min(options.maxBackoffMs, 1000 * 2 ** Math.min(failures - 1, 16)) * (0.5 + Math.random() / 2);
      logger.warn({ err: error, retryInMs: Math.round(delay) }, 'could not ask to resume the run');
      await sleep(delay, undefined, { signal: options.signal }).catch(() => undefined);
    }
  }
  return null;
}

/**
 * Cancels a run's jobs, gives the run back while its lease is still held (a refused
 * resume with a cancel pending; otherwise the lease is gone and the release changes
 * nothing), and forgets it. The release carries the epoch recorded: the run may have been
 * resumed by an earlier start, whose epoch is now the lease's.
 */
async function giveUp(
  options: ResumeHeldRunsOptions,
  run: HeldRun,
  why: string,
  logger: Logger,
): Promise<void> {
  const jobs = await cancelJobsOfRuns(options.workDir, (runId) => runId === run.runId, logger);
  await options.client
    .release(
      { runId: run.runId, lease: run.lease, epoch: run.epoch },
      'The runner executing it was restarted and could not go on with it',
      { retries: 1 },
    )
    .catch(() => undefined);
  await options.heldRuns.forget(run.runId);
  logger.warn(
    { attempt: run.attempt, reason: why, jobs },
    jobs.length > 0
      ? `the run is not resumed; its Slurm job${jobs.length > 1 ? 's' : ''} ${jobs.join(', ')} cancelled`
      : 'the run is not resumed',
  );
}
