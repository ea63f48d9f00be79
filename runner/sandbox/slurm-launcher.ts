import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Resources } from '../../schemas/resources.js';
import type { StageUsage } from '../../schemas/stage-usage.js';
import { ATTACH_SCRIPT } from './slurm-attach-script.js';
import { cappedJobScript } from './slurm-capped-job.js';
import type { JobEnd } from './job-status-line.js';
import { slurmExitCause, slurmGivesBack } from './slurm-exit-causes.js';
import { SUBMITTING_SUFFIX } from './slurm-submit-script.js';
import { readSlurmUsage } from './slurm-usage.js';
import {
  directLauncher,
  signalGroup,
  type LaunchedStage,
  type StageLaunch,
  type StageLauncher,
} from './stage-launcher.js';

/** How a Slurm launcher follows its jobs. */
export interface SlurmLauncherOptions {
  /**
   * How long a job that squeue, sacct and scontrol all stopped knowing is waited for
   * before its stage ends with "Slurm no longer knows job N", and a kept job id they do
   * not know before a launch that would re-attach to it cancels it and submits the stage
   * again (a slurmctld that restarts may answer "Invalid job id" for a moment).
   * @defaultValue 60000
   */
  unknownJobGraceMs?: number;
  /**
   * How long a job may pend for a reason that never clears (slurm-unstartable.ts: it asks
   * for more than its partition allows) before it is cancelled and its stage fails, naming
   * the reason and the limit (`--slurm-unstartable-grace`).
   * @defaultValue 120000
   */
  unstartableGraceMs?: number;
}

/**
 * Runs each stage as a Slurm job (issue 12): the spawned program is a small attach
 * process (slurm-attach-script.ts) that submits `sbatch --parsable --wrap CMD` with the
 * stage's resources as flags, in the stage's directory (on the cluster's shared file
 * system), and follows the job: its output arrives as the engine's live lines, its exit
 * code is the stage's, and stopping the attach process cancels the job. So the whole
 * engine is reused: the cache is checked before anything is submitted, independent
 * stages run at once (up to the runner's `--jobs`), timeouts and cancel work as for a
 * local process. The job id and its output files are kept in `jobDir`, by stage, so a
 * launch for a stage whose job still lives (a runner restarted mid-run) re-attaches to it
 * instead of submitting again; one that submits in a resumed attempt first cancels any job
 * of the stage still alive that it does not re-attach to (supersededMarkerPrefix). The attach process reports why its job is pending on its
 * descriptor 3 (`reportsJobStatus`), which the engine turns into `stage.pending` events, and
 * there what ended it when Slurm did, which names the stage's error (never its exit code). A
 * launch without a stage (the pipeline's `fingerprint` command) runs on this node.
 */
export class SlurmLauncher implements StageLauncher {
  readonly honoursResources = true;
  private readonly unknownJobGraceMs: number;
  private readonly unstartableGraceMs: number;

  /**
   * @param jobDir Where each stage's job id and output files are kept: the runner's work
   * directory, by run and attempt (never the checkout, which the next checkout cleans),
   * or a local run's `.fluksio/slurm/`.
   */
  constructor(
    private readonly jobDir: string,
    options: SlurmLauncherOptions = {},
  ) {
    this.unknownJobGraceMs = graceMs('unknownJobGraceMs', options.unknownJobGraceMs ?? 60_000);
    this.unstartableGraceMs = graceMs('unstartableGraceMs', options.unstartableGraceMs ?? 120_000);
  }

  launch(cmd: string, cwd: string, writable: readonly string[] = [], stage?: LaunchedStage): StageLaunch {
    if (!stage) return directLauncher.launch(cmd, cwd, writable);
    mkdirSync(this.jobDir, { recursive: true, mode: 0o700 });
    const base = this.baseOf(stage);
    return {
      file: '/bin/bash',
      args: [
        '-c',
        ATTACH_SCRIPT,
        'fluksio-slurm-attach',
        `${base}.job`,
        `${base}.out`,
        `${base}.err`,
        String(this.unknownJobGraceMs),
        String(this.unstartableGraceMs),
        submissionMarker(stage),
        supersededMarkerPrefix(stage),
        ...sbatchFlags(stage.name, cwd, stage.resources),
        `--wrap=${cappedJobScript(cmd, stage.logLimit)}`,
      ],
      reportsJobStatus: true,
    };
  }

  signal(pid: number, signal: NodeJS.Signals): void {
    signalGroup(pid, signal);
  }

  explainExit(end: JobEnd): string | null {
    return slurmExitCause(end);
  }

  givesBack(end: JobEnd): boolean {
    return slurmGivesBack(end);
  }

  /**
   * Whether the stage's job id is kept from an earlier launch, or the marker of a submission
   * whose id was never kept (its attach process killed just after sbatch): the attach
   * process re-attaches to that job.
   */
  reattaches(stage: LaunchedStage): boolean {
    const job = `${this.baseOf(stage)}.job`;
    return [job, `${job}${SUBMITTING_SUFFIX}`].some(
      (file) => (statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0,
    );
  }

  /**
   * What the stage's last job used, read once its attach process ended (readSlurmUsage,
   * which waits a moment for the accounting unless `signal` is aborted); null when unknown.
   */
  async usage(stage: LaunchedStage, signal?: AbortSignal): Promise<StageUsage | null> {
    const ended = `${this.baseOf(stage)}.job.ended`;
    const job = (await readFile(ended, 'utf8').catch(() => '')).trim();
    if (job === '') return null;
    await rm(ended, { force: true });
    return readSlurmUsage(job, { submittedGpus: stage.resources.gpus ?? 0, ...(signal ? { signal } : {}) });
  }

  private baseOf(stage: LaunchedStage): string {
    return path.join(this.jobDir, jobFileBase(stage));
  }
}

/**
 * The comment a launch's job is submitted with, `fluksio:RUN:STAGE:NONCE`, unique to the
 * launch: an sbatch that timed out may have queued the job, which the attach process then
 * finds by it rather than submitting the stage twice (slurm-submit-script.ts).
 */
export function submissionMarker(stage: LaunchedStage): string {
  return `fluksio:${stage.runId ?? 'run'}:${stage.name}:${randomBytes(8).toString('hex')}`;
}

/**
 * The start of the comments of the jobs an earlier launch of the stage submitted in its run
 * (`fluksio:RUN:STAGE:`), which the attach process cancels before it submits the stage in a
 * resumed attempt; empty outside one, and for a run without an id (a local run's `run`).
 */
export function supersededMarkerPrefix(stage: LaunchedStage): string {
  return stage.resumed && stage.runId ? `fluksio:${stage.runId}:${stage.name}:` : '';
}

/** The longest base of a stage's job files' names; the longest file is `BASE.job.submitting`. */
const MAX_JOB_FILE_BASE = 200;

/**
 * The base of a stage's job files' names: its job key and name (`KEY-train`, safe for a file
 * name), or, where that would not fit in a file name (255 bytes: a long stage name, twice in an
 * uncached stage's key), its start and a digest of all of it, as unique.
 */
function jobFileBase(stage: LaunchedStage): string {
  const base = `${stage.jobKey}-${stage.name}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (base.length <= MAX_JOB_FILE_BASE) return base;
  const digest = createHash('sha256').update(`${stage.jobKey}\0${stage.name}`).digest('hex');
  return `${base.slice(0, MAX_JOB_FILE_BASE - digest.length - 1)}-${digest}`;
}

/** A grace period given in milliseconds, checked: a whole number ≥ 0. */
function graceMs(name: string, ms: number): number {
  if (!Number.isInteger(ms) || ms < 0)
    throw new Error(`${name} must be a whole number of milliseconds ≥ 0, not ${ms}`);
  return ms;
}

/** The `sbatch` flags of a stage: its name, directory and resources. */
export function sbatchFlags(name: string, cwd: string, resources: Resources): string[] {
  const flags = [`--job-name=fluksio-${name}`, `--chdir=${cwd}`];
  if (resources.gpus !== undefined && resources.gpus > 0) flags.push(`--gpus=${resources.gpus}`);
  if (resources.cpus !== undefined) flags.push(`--cpus-per-task=${resources.cpus}`);
  if (resources.memory !== undefined) flags.push(`--mem=${resources.memory}M`);
  // Slurm counts time limits in whole minutes.
  if (resources.time !== undefined) flags.push(`--time=${Math.ceil(resources.time / 60_000)}`);
  if (resources.partition !== undefined) flags.push(`--partition=${resources.partition}`);
  return flags;
}
