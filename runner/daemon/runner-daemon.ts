import { chmod, mkdir, realpath, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeStageUser } from '../sandbox/stage-user.js';
import { closeWorkDir } from './close-work-dir.js';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { PROTOCOL_VERSION } from '../../schemas/protocol/protocol-version.js';
import { FLUKSIO_VERSION } from '../../core/fluksio-version.js';
import { refusesEveryRequest, UnauthorizedError } from '../../client/control-plane-errors.js';
import { executeClaim } from './execute-claim.js';
import { HeldRuns } from './held-runs.js';
import { eventJournalDir, removeEventJournals } from './event-journal-dir.js';
import { resumeHeldRuns, type ResumedRun } from './resume-held-runs.js';
import { GitWorkspace } from './git-workspace.js';
import { InterpreterDigests } from '../keys/interpreter-digests.js';
import { LocalBlobCache } from './local-blob-cache.js';
import { resolveStageUser } from './resolve-stage-user.js';
import { lockWorkDir } from './work-dir-lock.js';
import { StageGroups } from '../sandbox/stage-groups.js';
import type { RunnerDaemonOptions } from './runner-daemon-options.js';
import { runnerSandboxPolicy } from './runner-sandbox-policy.js';

/** A started runner daemon. */
export interface RunnerDaemon {
  /**
   * Settles when the daemon has stopped: resolves after stop(), rejects when the
   * control plane refuses the token or speaks another protocol (nothing could ever be
   * claimed; ProtocolMismatchError's message says which side to upgrade).
   */
  done: Promise<void>;
  /** Stops claiming, cancels running stages, releases their runs; resolves when all slots ended. */
  stop(): Promise<void>;
}

/**
 * Starts the self-hosted runner (DESIGN §6): `concurrency` slots, each long-polling
 * the control plane for a run and executing it (execute-claim.ts). While the control
 * plane is unreachable, each slot waits longer between claims, up to `maxBackoffMs`.
 * The work directory is locked, so two runners never share checkouts. A Slurm runner
 * records each run it holds there (held-runs.ts); started again after it was killed, it
 * resumes those runs in their attempts, re-attaching to their jobs, before it claims
 * anything (resume-held-runs.ts).
 */
export async function startRunnerDaemon(options: RunnerDaemonOptions): Promise<RunnerDaemon> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new Error(`concurrency must be a whole number from 1 to 64, not ${concurrency}`);
  }
  const jobs = options.jobs ?? 1;
  if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`jobs must be a whole number ≥ 1, not ${jobs}`);
  const { logger } = options;
  const slurm = options.backend === 'slurm';
  if (slurm && (options.sandbox || options.stageUser !== undefined || options.acceptForks)) {
    throw new Error(
      '--backend slurm: stages run as Slurm jobs, which this runner neither sandboxes nor runs as a stage user; drop --sandbox, --stage-user and --accept-forks',
    );
  }
  const stageUser =
    options.stageUser === undefined
      ? null
      : await resolveStageUser(options.stageUser, process.getuid?.() ?? 0);
  if (stageUser && (concurrency > 1 || jobs > 1)) {
    // Every process of the user dies when a stage ends, and runs of one user could read each other's checkouts.
    throw new Error(
      `--stage-user ${stageUser.name}: one user runs one stage at a time; run it with --concurrency 1 ` +
        '(start another runner, with its own user and --work-dir, for more)',
    );
  }
  await mkdir(path.resolve(options.workDir), { recursive: true, mode: 0o700 });
  // Real, because a sandbox binds the checkouts and masks the rest by these paths.
  const workDir = await realpath(path.resolve(options.workDir));
  // The runner's alone, also when it was made by hand (closeWorkDir below lets a stage
  // user pass through): it holds private repositories' mirrors and outputs, and what
  // sandboxed stages left in their checkouts — a setuid copy of a program, owned by the
  // runner's user, would run as it for anyone reaching it.
  await chmod(workDir, 0o700);
  const sandbox = await runnerSandboxPolicy(options, workDir, stageUser);
  const lock = await lockWorkDir(workDir);
  const unlock = () => lock.release();
  // What a runner that died left spooled belongs to leases gone with it.
  const eventSpoolDir = path.join(workDir, 'event-spool');
  await rm(eventSpoolDir, { recursive: true, force: true });
  await mkdir(eventSpoolDir, { mode: 0o700 });
  if (stageUser) {
    await closeWorkDir({
      workDir,
      slots: concurrency,
      user: stageUser,
      secrets: [...(options.hiddenPaths ?? []), ...sandbox.hiddenFromForks],
    }).catch(async (error: unknown) => {
      await unlock();
      throw error;
    });
  }

  const client = new ControlPlaneClient({
    url: options.url,
    token: options.token,
    ...(options.requestRetries !== undefined ? { retries: options.requestRetries } : {}),
    ...(options.retryDelayMs !== undefined ? { minRetryDelayMs: options.retryDelayMs } : {}),
    onRetry: ({ request, attempt, error }) =>
      logger.debug({ request, attempt, err: error }, 'retrying a request'),
  });
  const blobCache = await LocalBlobCache.open({
    root: path.join(workDir, 'blobs'),
    maxBytes: options.blobCacheBytes ?? 10 * 1024 ** 3,
  });
  const git = new GitWorkspace({
    workDir,
    environment: options.environment,
    ...(options.mirrorCacheBytes !== undefined ? { maxMirrorBytes: options.mirrorCacheBytes } : {}),
    onPruned: (mirrors) => logger.info({ mirrors }, 'least recently used mirrors removed (size cap)'),
  });
  const interpreterDigests = new InterpreterDigests(path.join(workDir, 'interpreter-digests.json'));
  const stopping = new AbortController();
  /** Why nothing can be claimed any more: the token refused, or another protocol. */
  let refusal: Error | null = null;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;

  const heldRuns = new HeldRuns(workDir);
  const journalDir = eventJournalDir(workDir);
  await mkdir(journalDir, { recursive: true, mode: 0o700 });
  // Under the work directory's lock, before anything is claimed or given back: no run's
  // next attempt starts beside what a runner killed hard left running.
  const stageGroups = new StageGroups(path.join(workDir, 'stage-groups'));
  const leftovers = await stageGroups.killLeftovers();
  for (const file of leftovers.unreadable)
    logger.warn({ file }, 'a stage-group record could not be read: removed');
  for (const group of leftovers.ended) {
    logger.warn(
      group,
      group.gone
        ? 'ended the stage processes a runner killed before this start left running'
        : 'killed the stage processes a runner killed before this start left running; some have not ended yet',
    );
  }

  /** Executes a run claimed (or resumed) in the slot `index`, its checkout the slot `slot`'s. */
  const execute = async (
    claim: Claim,
    index: number,
    resumed?: Pick<ResumedRun, 'slot' | 'started' | 'nextSeq' | 'epoch' | 'finished'>,
  ): Promise<void> => {
    const slot = resumed?.slot ?? index;
    const runLogger = logger.child({ run: claim.run.id, slot });
    if (!resumed) {
      runLogger.info(
        {
          repository: claim.repo.repository,
          commit: claim.commit,
          attempt: claim.run.attempt,
          fork: claim.repo.fork,
        },
        'claimed a run',
      );
    }
    // A Slurm run's jobs outlive the runner: recorded, a runner killed hard resumes the run
    // at its next start and re-attaches to them (resume-held-runs.ts).
    if (slurm) {
      await heldRuns
        .record({
          runId: claim.run.id,
          attempt: claim.run.attempt,
          lease: claim.lease,
          epoch: resumed?.epoch ?? 0,
          slot,
        })
        .catch((error: unknown) =>
          runLogger.warn({ err: error }, 'could not record the run as held: a restart will not resume it'),
        );
    }
    try {
      const result = await executeClaim({
        claim,
        slot,
        client,
        git,
        blobCache,
        interpreterDigests,
        acceptForks: options.acceptForks ?? false,
        sandbox,
        runnerEnvironment: options.environment,
        secrets: options.secrets ?? {},
        jobs,
        killGraceMs: options.killGraceMs ?? 5000,
        eventSpool: {
          dir: eventSpoolDir,
          maxMemoryBytes: options.eventMemoryBytes ?? 16 * 1024 ** 2,
          // Only a runner that resumes its runs reads a journal back.
          ...(slurm ? { journalDir } : {}),
        },
        stopSignal: stopping.signal,
        releaseGraceMs: options.releaseGraceMs ?? 10_000,
        stageGroups,
        logger: runLogger,
        ...(resumed
          ? {
              resumed: {
                started: resumed.started,
                nextSeq: resumed.nextSeq,
                epoch: resumed.epoch,
                finished: resumed.finished,
              },
            }
          : {}),
      });
      // The control plane may offer the same fork run again at once: do not spin on it.
      if (result.end === 'refused') await pause(maxBackoffMs, stopping.signal);
    } catch (error) {
      runLogger.error({ err: error }, 'the run could not be finished; its lease will expire');
    } finally {
      await heldRuns.forget(claim.run.id).catch(() => undefined);
    }
  };

  /** Claims and executes runs in the slot `index` once the run resumed in it (if any) ended. */
  const slot = async (index: number, resumedRun: Promise<void> | undefined): Promise<void> => {
    await resumedRun;
    let failures = 0;
    while (!stopping.signal.aborted) {
      let claim;
      try {
        claim = await client.claim(options.claimWaitSeconds ?? 30, options.acceptForks ?? false, {
          signal: stopping.signal,
        });
        failures = 0;
      } catch (error) {
        if (stopping.signal.aborted) return;
        if (refusesEveryRequest(error)) {
          refusal = error;
          stopping.abort();
          return;
        }
        failures += 1;
        const delay =
          Math.min(maxBackoffMs, 1000 * 2 ** Math.min(failures - 1, 16)) * (0.5 + Math.random() / 2);
        logger.warn({ slot: index, err: error, retryInMs: Math.round(delay) }, 'could not claim a run');
        await pause(delay, stopping.signal);
        continue;
      }
      if (!claim) continue;
      await execute(claim, index);
    }
  };

  const { bubblewrap } = sandbox.detection;
  logger.info(
    {
      url: client.origin,
      version: FLUKSIO_VERSION,
      protocol: PROTOCOL_VERSION,
      workDir,
      concurrency,
      acceptForks: options.acceptForks ?? false,
      sandbox: bubblewrap ? (sandbox.always ? 'every run' : 'fork runs') : 'none',
      bubblewrap: bubblewrap ? `${bubblewrap.version} (${bubblewrap.path})` : sandbox.detection.reason,
      stageUser: stageUser ? describeStageUser(stageUser) : 'none',
    },
    'runner started',
  );
  if (options.acceptForks && !bubblewrap && !stageUser) {
    logger.warn(
      { reason: sandbox.detection.reason },
      'fork runs will be given back: they run only in a sandbox, and none works here',
    );
  }
  const slots = (async () => {
    // Every resumed run executes at once, as soon as it is resumed, in the slot it held (one
    // past `concurrency`, had the runner more slots before, is a temporary one nothing claims
    // into): its lease is heartbeated from then, where one waiting behind another would
    // expire and be swept while its Slurm job runs on unfollowed. A stop that came meanwhile
    // releases them and cancels their jobs (execute-claim.ts), rather than leaving them leased.
    const resumedRuns = new Map<number, Promise<void>>();
    try {
      // Before anything is claimed: a resumed run takes back the slot (and checkout) it had.
      const resumed = await resumeHeldRuns({
        client,
        heldRuns,
        workDir,
        canResume: slurm,
        logger,
        signal: stopping.signal,
        maxBackoffMs,
        onResumed: (run) => resumedRuns.set(run.slot, execute(run.claim, run.slot, run)),
      });
      // The journals of the runs given up will never be sent; those of runs still recorded
      // (not asked about before a stop) wait for the next start.
      const kept = new Set([
        ...resumed.map((run) => run.claim.run.id),
        ...(await heldRuns.list()).held.map((run) => run.runId),
      ]);
      await removeEventJournals(journalDir, (runId) => kept.has(runId));
    } catch (error) {
      if (refusesEveryRequest(error)) {
        refusal = error;
        // Nothing more is claimed; the runs already resumed end (released) before the daemon does.
        stopping.abort();
        await Promise.all(resumedRuns.values());
        return;
      }
      // The records stay: the next start tries again. Claiming goes on meanwhile.
      logger.error({ err: error }, 'could not resume the runs this runner held');
    }
    await Promise.all([
      ...resumedRuns.values(),
      ...Array.from({ length: concurrency }, (_, index) => slot(index, resumedRuns.get(index))),
    ]);
  })();
  const done = slots.then(async () => {
    await unlock().catch(() => undefined);
    if (refusal) logger.error({ err: refusal }, 'runner stopped: the control plane refuses every claim');
    else logger.info('runner stopped');
    if (refusal instanceof UnauthorizedError) {
      throw new Error(`The control plane at ${client.origin} refused the runner token: ${refusal.message}`, {
        cause: refusal,
      });
    }
    // A protocol mismatch's message already names the control plane and what to upgrade.
    if (refusal) throw refusal;
  });
  // Whoever awaits `done` sees a refusal; stop() itself only waits.
  done.catch(() => undefined);
  return {
    done,
    stop: async () => {
      stopping.abort();
      await done.catch(() => undefined);
    },
  };
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}
