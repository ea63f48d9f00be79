import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { RunEvent } from '../../schemas/run-event.js';
import type { z } from 'zod';
import type { FinishRequest } from '../../schemas/protocol/lease-requests.js';
import { runPipeline, type RunOutcome } from '../run-pipeline.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { ControlPlaneError, isLeaseLost } from '../../client/control-plane-errors.js';
import type { GitWorkspace } from './git-workspace.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { InterpreterDigests } from '../keys/interpreter-digests.js';
import type { LocalBlobCache } from './local-blob-cache.js';
import { prepareClaimedRun, type PreparedRun } from './prepare-claimed-run.js';
import { RemoteBlobStore } from './remote-blob-store.js';
import { RemoteEventSink } from './remote-event-sink.js';
import { RemoteStageCache } from './remote-stage-cache.js';
import { reclaimCheckout } from './reclaim-checkout.js';
import { runSandbox, type SandboxPolicy } from './run-sandbox.js';
import type { StageGroups } from '../sandbox/stage-groups.js';
import { directLauncher } from '../sandbox/stage-launcher.js';
import { slurmJobDir } from './slurm-job-dir.js';
import { cancelSupersededJobs } from './cancel-superseded-jobs.js';
import { cancelAttemptJobs } from './slurm-attempt-jobs.js';
import { finishOrFail } from './finish-or-fail.js';
import { forgetFetchCredential } from './forget-fetch-credential.js';
import { Masker } from '../output/masker.js';
import { eventJournalFile } from './event-journal-dir.js';
import { readEventJournal } from './read-event-journal.js';
import { isStageSuccess } from '../../schemas/statuses.js';

export interface ExecuteClaimOptions {
  claim: Claim;
  /** The concurrency slot the run executes in (its checkouts are the slot's own). */
  slot: number;
  client: ControlPlaneClient;
  git: GitWorkspace;
  blobCache: LocalBlobCache;
  /** Digests of the programs stages start, shared by the runner's runs. */
  interpreterDigests: InterpreterDigests;
  /** Run fork pull requests' code (`--accept-forks`); otherwise such runs are released. */
  acceptForks: boolean;
  /** Which runs' stages are sandboxed, and whether a sandbox works here. */
  sandbox: SandboxPolicy;
  /** The runner's environment: a trusted run's pipeline `env` values come from it. */
  runnerEnvironment: Readonly<Record<string, string | undefined>>;
  /** The runner's secrets (`--env-file`): for trusted runs only, masked everywhere. */
  secrets: Readonly<Record<string, string>>;
  /** Stages of the run executing at once. */
  jobs: number;
  /** Grace between SIGINT, SIGTERM and SIGKILL for a stopped stage. */
  killGraceMs: number;
  /** Aborted when the runner stops (SIGTERM): the stage is cancelled and the run released. */
  stopSignal: AbortSignal;
  /** Once stopping, how long the run's last events may take to upload before the release. */
  releaseGraceMs: number;
  /**
   * Where a run's events wait on disk while the control plane does not take them, past
   * `eventMemoryBytes` of them in memory (spooled-event-queue.ts).
   */
  eventSpool: {
    dir: string;
    maxMemoryBytes: number;
    /**
     * Where each attempt's events are journaled until acknowledged (event-journal-dir.ts),
     * for a resume to send what a runner killed hard had not: a runner that resumes its
     * runs gives one. @defaultValue none
     */
    journalDir?: string;
  };
  /**
   * Records the process groups of the stages started on this machine, for the next start
   * to end what a kill -9 left running. @defaultValue none
   */
  stageGroups?: StageGroups;
  /** Logs with the run id bound. */
  logger: Logger;
  /**
   * The run is one this runner held before it was restarted, resumed in the same attempt
   * (resume-held-runs.ts): a started run's checkout is taken as it was left, since its
   * Slurm jobs may still run there, and it is not started again; its events continue
   * from `nextSeq`; the stages `finished` in the attempt are kept as recorded, not run
   * again; its writes carry the lease's `epoch` from the resume, those of the process that
   * died an older one, refused. @defaultValue a fresh claim
   */
  resumed?: { started: boolean; nextSeq: number; epoch: number; finished?: readonly StageRecord[] };
}

/** How a claimed run ended on this runner. */
export type ClaimEnd =
  | { end: 'finished'; status: FinishRequest['status'] }
  | { end: 'released'; reason: string }
  /** A fork's run this runner does not take (or cannot sandbox), given back. */
  | { end: 'refused' }
  | { end: 'lease-lost' };

/** Why the runner stopped the run, when it was not the run's own ending. */
type StopRequest =
  | { kind: 'cancel'; status: 'cancelled' | 'timed_out'; reason: string }
  | { kind: 'release'; reason: string }
  /** The control plane refused the run's events for good (a 4xx): the run fails, saying why. */
  | { kind: 'refused'; reason: string };

/**
 * Executes one claimed run (DESIGN §5, §6). The lease is heartbeated and watched from the
 * first moment; a cancel (from the watch, or a heartbeat's reply) stops the engine and the
 * run finishes as the control plane said (`cancelled`, `timed_out`); a lease found gone
 * stops everything and nothing more is written. Fork runs are released unless the runner accepts forks and
 * has a sandbox to run them in (run-sandbox.ts), which also says whether a trusted run's
 * stages are sandboxed. The claimed commit is fetched, checked out and verified; the
 * pipeline and params are checked at that commit (a problem fails the run with the
 * problem as reason); the run is started with its stamp and executed by the engine
 * against the remote cache, blob store and event sink; after its events are acknowledged
 * it is finished with its outcome. When the runner stops, the stage is cancelled and the run released, so it
 * goes back to the queue. A run resumed after the runner was restarted (`resumed`) runs
 * the same way in its attempt, from its checkout as it was left: the stages that finished
 * keep their records, and a Slurm job still running is re-attached to.
 */
export async function executeClaim(options: ExecuteClaimOptions): Promise<ClaimEnd> {
  const { claim, client, logger } = options;
  const run: RunLease = { runId: claim.run.id, lease: claim.lease, epoch: options.resumed?.epoch ?? 0 };
  const leaseLost = new AbortController();
  const engineAbort = new AbortController();
  const drainDeadline = new AbortController();
  let drainTimer: NodeJS.Timeout | null = null;
  let stop: StopRequest | null = null;
  let slurmJobs: string | null = null;
  const journalFile = options.eventSpool.journalDir
    ? eventJournalFile(options.eventSpool.journalDir, claim.run.id, claim.run.attempt)
    : null;
  let events: RemoteEventSink | null = null;

  const keeper = new LeaseKeeper({
    client,
    run,
    intervalMs: claim.heartbeatIntervalMs,
    onCancel: ({ finishAs, reason }, via) => {
      logger.info({ finishAs, reason, via }, 'the control plane stopped the run');
      stop ??= { kind: 'cancel', status: finishAs ?? 'cancelled', reason: reason ?? 'The run was cancelled' };
      engineAbort.abort();
    },
    onLeaseLost: (error) => {
      logger.warn({ err: error }, 'the lease is gone: stopping the run, writing nothing more');
      leaseLost.abort(error);
      engineAbort.abort();
    },
    onError: (error) => logger.warn({ err: error }, 'heartbeat failed; trying again at the next beat'),
    onWatchRefused: (error) =>
      logger.warn(
        { err: error },
        'the control plane refused the cancel watch; a cancel comes with a heartbeat',
      ),
  });
  const onStop = () => {
    stop ??= { kind: 'release', reason: 'The runner executing it was stopped' };
    engineAbort.abort();
    drainTimer = setTimeout(() => drainDeadline.abort(), options.releaseGraceMs);
  };
  options.stopSignal.addEventListener('abort', onStop, { once: true });
  if (options.stopSignal.aborted) onStop();
  keeper.start();

  // Whatever the run: a sentence about its checkout may name a file a run before it made.
  const masker = new Masker();
  for (const secret of Object.values(options.secrets)) masker.add(secret);
  const end = async (unmasked: z.input<typeof FinishRequest> | { release: string }): Promise<ClaimEnd> => {
    // Heartbeats end first: one answered after the finish would only report a lease gone.
    await keeper.stop();
    if (leaseLost.signal.aborted) return { end: 'lease-lost' };
    // Its sentences quote git, the engine and the control plane, which may quote a secret
    // (`failed to remove keep/<secret>.txt`): masked before they are cut or sent.
    const result = maskedEnd(masker, unmasked);
    try {
      if ('release' in result) {
        await client.release(run, result.release.slice(0, 1000));
        logger.info({ reason: result.release }, 'run released');
        return { end: 'released', reason: result.release };
      }
      const finish = { ...result, reason: result.reason?.slice(0, 4000) ?? null };
      await finishOrFail(client, run, finish, logger, drainDeadline.signal);
      logger.info({ status: result.status, reason: result.reason }, 'run finished');
      return { end: 'finished', status: result.status };
    } catch (error) {
      if (isLeaseLost(error)) return { end: 'lease-lost' };
      throw error;
    }
  };
  /**
   * How the run ends when the runner stopped it, or null when it was not stopped: a
   * run whose stages all ended before the stop took effect finishes with its outcome.
   */
  const stopped = (outcome: RunOutcome | null): Promise<ClaimEnd> | null => {
    if (leaseLost.signal.aborted) return Promise.resolve({ end: 'lease-lost' });
    if (outcome && outcome.status !== 'cancelled') return null;
    if (stop?.kind === 'release') return end({ release: stop.reason });
    if (stop?.kind === 'refused') return failed(stop.reason);
    if (stop?.kind === 'cancel')
      return end({
        lease: run.lease,
        status: stop.status,
        reason: stop.reason,
        metrics: outcome?.metrics ?? {},
      });
    return null;
  };
  function failed(reason: string): Promise<ClaimEnd> {
    return end({ lease: run.lease, status: 'failed', reason, metrics: {} });
  }

  try {
    if (claim.repo.fork && !options.acceptForks) {
      await forgetFetchCredential(client, run, claim, logger);
      const released = await end({
        release: 'This runner does not execute fork pull requests (it was not started with --accept-forks)',
      });
      return released.end === 'released' ? { end: 'refused' } : released;
    }
    const checkoutRequest = {
      slot: options.slot,
      repository: claim.repo.repository,
      cloneUrl: claim.repo.cloneUrl,
      fetchRef: claim.repo.fetchRef,
      commit: claim.commit,
      extraHeader: claim.git.extraHeader,
      fork: claim.repo.fork,
      signal: engineAbort.signal,
    };
    const paths = {
      ...options.git.pathsOf(checkoutRequest),
      slurmJobs: slurmJobDir(options.sandbox.workDir, claim.run.id, claim.run.attempt),
    };
    const sandbox = runSandbox(options.sandbox, claim.repo.fork, paths);
    if (options.sandbox.slurm && !('refusal' in sandbox)) {
      slurmJobs = paths.slurmJobs;
      const superseded = await cancelSupersededJobs(
        options.sandbox.workDir,
        claim.run.id,
        claim.run.attempt,
        logger,
      );
      if (superseded.length > 0) {
        logger.info({ jobs: superseded }, "cancelled the Slurm jobs of the run's superseded attempts");
      }
    }
    const { stageUser } = options.sandbox;
    if ('refusal' in sandbox) {
      await forgetFetchCredential(client, run, claim, logger);
      const released = await end({ release: sandbox.refusal });
      return released.end === 'released' ? { end: 'refused' } : released;
    }
    const resumedStarted = options.resumed?.started ?? false;
    let prepared: PreparedRun;
    try {
      // A runner that died mid-run left the checkout (and maybe processes) to the stage user.
      if (stageUser) await reclaimCheckout(paths.checkout, stageUser);
      const repoRoot = await (
        resumedStarted
          ? options.git.reopen(checkoutRequest)
          : options.git.checkout({ ...checkoutRequest, untrusted: sandbox.launcher !== undefined })
      ).finally(() => forgetFetchCredential(client, run, claim, logger));
      prepared = await prepareClaimedRun({
        repoRoot,
        claim,
        runnerEnvironment: options.runnerEnvironment,
        secrets: options.secrets,
        statCacheFile: paths.statCache,
      });
    } catch (error) {
      return (await stopped(null)) ?? (await failed((error as Error).message));
    }
    const early = stopped(null);
    if (early) return await early;

    try {
      // A resumed run started before its runner was restarted: its stamp stands.
      const started = resumedStarted
        ? { status: 'running' as const, reason: null }
        : await client.start(run, {
            codeDigest: prepared.stamp.codeDigest,
            envDigest: prepared.stamp.envDigest,
            params: prepared.stamp.params,
            paramsDigest: prepared.stamp.paramsDigest,
            sandbox: sandbox.sandbox,
          });
      if (started.status !== 'running') {
        // The control plane ended the run at its start (the params resolved here are not
        // those it was queued with): nothing runs, and there is nothing left to finish.
        await keeper.stop();
        logger.error(
          { status: started.status, reason: started.reason },
          'the control plane did not start the run',
        );
        return started.status === 'failed' ? { end: 'finished', status: 'failed' } : { end: 'lease-lost' };
      }
    } catch (error) {
      if (isLeaseLost(error)) return { end: 'lease-lost' };
      logger.error({ err: error }, 'could not start the run: giving it back');
      return await end({ release: `The runner could not start the run: ${(error as Error).message}` });
    }
    logger.info(
      {
        codeDigest: prepared.stamp.codeDigest,
        commit: claim.commit,
        sandboxed: sandbox.launcher !== undefined,
      },
      resumedStarted ? 'run resumed' : 'run started',
    );

    // What the process killed before this one emitted and the control plane never stored:
    // sent first, and the stages whose end it holds are kept as finished, not run again.
    const unsent =
      journalFile && resumedStarted
        ? await readEventJournal(journalFile, options.resumed?.nextSeq ?? 0, (error) =>
            logger.warn(
              { err: error, journal: journalFile },
              'the event journal could not be read: the stages whose end it holds run again',
            ),
          )
        : [];
    if (journalFile && !resumedStarted) await rm(journalFile, { force: true });
    const finished = keptStageEnds(options.resumed?.finished ?? [], unsent);
    if (unsent.length > 0) {
      logger.info(
        {
          events: unsent.length,
          stages: finished.slice(options.resumed?.finished?.length ?? 0).map((record) => record.name),
        },
        'sending the events the runner had not sent before it was restarted',
      );
    }
    events = new RemoteEventSink({
      client,
      run,
      attempt: claim.run.attempt,
      firstSeq: options.resumed?.nextSeq ?? 0,
      unsent,
      ...(journalFile
        ? {
            journal: {
              file: journalFile,
              onJournalRefused: (error: unknown) =>
                logger.warn(
                  { err: error, journal: journalFile },
                  'the event journal could not be written (a full disk?): a restart may run again what the unsent events record',
                ),
            },
          }
        : {}),
      spool: {
        file: path.join(options.eventSpool.dir, `${claim.run.id}-${claim.run.attempt}.jsonl`),
        maxMemoryBytes: options.eventSpool.maxMemoryBytes,
        onSpoolRefused: (error) =>
          logger.warn(
            { err: error, spool: options.eventSpool.dir },
            'the event spool could not be written (a full disk?): events wait in memory until it can be',
          ),
      },
      signal: AbortSignal.any([leaseLost.signal, drainDeadline.signal]),
      onError: (error) => {
        logger.warn({ err: error }, 'event upload stopped');
        // Sending the same events again would be refused again: stop the run now
        // rather than after its last stage, and fail it with the control plane's sentence.
        if (error instanceof ControlPlaneError && !isLeaseLost(error)) {
          stop ??= {
            kind: 'refused',
            reason: `The control plane refused the run's events: ${error.message}`,
          };
          engineAbort.abort();
        }
      },
    });

    let outcome: RunOutcome;
    try {
      outcome = await runPipeline({
        runId: claim.run.id,
        workspace: prepared.workspace,
        pipeline: prepared.pipeline,
        params: prepared.params,
        codeIndex: prepared.codeIndex,
        interpreterDigests: options.interpreterDigests,
        environment: prepared.environment,
        secrets: prepared.secrets,
        jobs: options.jobs,
        noCache: claim.run.noCache,
        // Only a started run's: one not started yet is checked out and started anew.
        ...(resumedStarted ? { finished } : {}),
        // A stage that had started before the restart is executed again, from its start.
        resumedAttempt: resumedStarted,
        cache: new RemoteStageCache({
          client,
          run,
          signal: leaseLost.signal,
          onError: (error) => logger.warn({ err: error }, 'cache lookup failed: treated as a miss'),
        }),
        blobs: new RemoteBlobStore({
          client,
          run,
          cache: options.blobCache,
          signal: leaseLost.signal,
          // A stage's outs wait out an outage as its events do, until the run is stopped.
          persist: engineAbort.signal,
        }),
        events,
        signal: engineAbort.signal,
        killGraceMs: options.killGraceMs,
        ...(options.stageGroups
          ? {
              launcher: options.stageGroups.track(
                sandbox.launcher ?? directLauncher,
                claim.run.id,
                (error, pid) => logger.warn({ err: error, pid }, 'could not record the stage process group'),
              ),
            }
          : sandbox.launcher
            ? { launcher: sandbox.launcher }
            : {}),
      });
      if (stageUser) await reclaimCheckout(paths.checkout, stageUser);
    } catch (error) {
      if (stageUser) await reclaimCheckout(paths.checkout, stageUser);
      // The engine itself only fails when its events cannot be delivered.
      return (
        (await stopped(null)) ??
        (await failed(`The runner could not deliver the run's events: ${(error as Error).message}`))
      );
    }
    if (outcome.giveBack !== null && stop === null && !leaseLost.signal.aborted) {
      // Not the run's fault (a requeued or preempted job): another attempt restores what finished.
      return await end({ release: `${outcome.giveBack}; queued again for another attempt` });
    }
    return (
      (await stopped(outcome)) ??
      (await end({
        lease: run.lease,
        status: outcome.status,
        reason: outcome.reason,
        metrics: outcome.metrics,
        // The control plane takes at most 100; each is already bounded.
        dirtyReasons: outcome.dirtyReasons.slice(0, 100),
      }))
    );
  } finally {
    options.stopSignal.removeEventListener('abort', onStop);
    // The attempt is over here: what it emitted was sent, or will never be.
    events?.close();
    if (journalFile) await rm(journalFile, { force: true });
    if (drainTimer) clearTimeout(drainTimer);
    await keeper.stop();
    // The attempt is over here, its jobs ended with its stages (a job still named was never
    // re-attached to: cancelled, so none is left running); a runner killed before this line
    // leaves them for the next runner, which resumes or cancels them.
    if (slurmJobs) {
      const left = await cancelAttemptJobs(slurmJobs, logger);
      if (left.length > 0) logger.warn({ jobs: left }, 'cancelled Slurm jobs no stage followed');
      await rmdir(path.dirname(slurmJobs)).catch(() => undefined);
    }
  }
}

/** A run's end with its sentences masked: the release's, or the finish's reason and dirty reasons. */
function maskedEnd(
  masker: Masker,
  result: z.input<typeof FinishRequest> | { release: string },
): z.input<typeof FinishRequest> | { release: string } {
  if ('release' in result) return { release: masker.mask(result.release) };
  const { reason, dirtyReasons } = result;
  return {
    ...result,
    reason: reason === null || reason === undefined ? reason : masker.mask(reason),
    ...(dirtyReasons ? { dirtyReasons: dirtyReasons.map((each) => masker.mask(each)) } : {}),
  };
}

/**
 * The stages a resumed attempt keeps as finished: those the control plane recorded, and
 * those whose end the journal holds unsent (sent first), when it is the stage's own result
 * (succeeded or failed) rather than a stop's doing (cancelled, skipped), which runs again.
 */
function keptStageEnds(recorded: readonly StageRecord[], unsent: readonly RunEvent[]): StageRecord[] {
  const kept = [...recorded];
  for (const event of unsent) {
    if (event.type !== 'stage.finished' || kept.some((record) => record.name === event.stage.name)) continue;
    if (isStageSuccess(event.stage.status) || event.stage.status === 'failed') kept.push(event.stage);
  }
  return kept;
}
