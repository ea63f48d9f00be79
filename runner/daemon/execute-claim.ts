import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { runPipeline, type RunOutcome } from '../run-pipeline.js';
import type { RunLease } from '../../client/run-lease.js';
import { isLeaseLost } from '../../client/control-plane-errors.js';
import { LeaseKeeper } from './lease-keeper.js';
import { prepareClaimedRun, type PreparedRun } from './prepare-claimed-run.js';
import { RemoteBlobStore } from './remote-blob-store.js';
import type { RemoteEventSink } from './remote-event-sink.js';
import { RemoteStageCache } from './remote-stage-cache.js';
import { reclaimCheckout } from './reclaim-checkout.js';
import { runSandbox } from './run-sandbox.js';
import { directLauncher } from '../sandbox/stage-launcher.js';
import { slurmJobDir } from './slurm-job-dir.js';
import { cancelSupersededJobs } from './cancel-superseded-jobs.js';
import { cancelAttemptJobs } from './slurm-attempt-jobs.js';
import { forgetFetchCredential } from './forget-fetch-credential.js';
import { Masker } from '../output/masker.js';
import { eventJournalFile } from './event-journal-dir.js';
import type { ExecuteClaimOptions } from './execute-claim-options.js';
import { endClaim, type ClaimEnd, type ClaimEnding } from './end-claim.js';
import { openAttemptEvents } from './open-attempt-events.js';

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
  const end = (unmasked: ClaimEnding): Promise<ClaimEnd> =>
    endClaim(
      {
        client,
        run,
        keeper,
        leaseLost: leaseLost.signal,
        masker,
        drainDeadline: drainDeadline.signal,
        logger,
      },
      unmasked,
    );
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

    const attempt = await openAttemptEvents({
      client,
      run,
      runId: claim.run.id,
      attempt: claim.run.attempt,
      resumedStarted,
      ...(options.resumed ? { resumed: options.resumed } : {}),
      journalFile,
      spool: options.eventSpool,
      signal: AbortSignal.any([leaseLost.signal, drainDeadline.signal]),
      logger,
      onRefused: (reason) => {
        stop ??= { kind: 'refused', reason };
        engineAbort.abort();
      },
    });
    events = attempt.events;
    const { finished } = attempt;

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
