import type { Resources } from '../../schemas/resources.js';
import type { StageUsage } from '../../schemas/stage-usage.js';
import type { JobEnd } from './job-status-line.js';

/** The program a stage's command is started with, and its arguments. */
export interface StageLaunch {
  file: string;
  args: string[];
  /** Started as this user and group instead of the engine's (stage-user-launcher.ts). */
  user?: { uid: number; gid: number };
  /**
   * The program says what its batch job is doing in lines on its descriptor 3
   * (job-status-line.ts): the Slurm launcher's attach process.
   */
  reportsJobStatus?: boolean;
}

/** Which stage a launch is for: a launcher that submits jobs keys and sizes them by it. */
export interface LaunchedStage {
  name: string;
  /**
   * The stage's cache key (the run's id and the stage's name for an uncached stage): a
   * restarted runner finds the job it submitted by it.
   */
  jobKey: string;
  /** Its resources, the pipeline's defaults applied. */
  resources: Resources;
  /** The run it is part of: a submitted job's comment names it (slurm-submit-script.ts). */
  runId?: string;
  /**
   * Launched in a resumed attempt (a runner restarted mid-run): a job an earlier launch of
   * the stage submitted may still run, under another key should the stage's have changed
   * with the restart (the runner's PATH, an upgraded interpreter). @defaultValue false
   */
  resumed?: boolean;
  /**
   * Its log limit in bytes: a launcher whose stages write their output to files (Slurm's
   * `--output`) bounds those with it. @defaultValue DEFAULT_LOG_LIMIT
   */
  logLimit?: number;
}

/**
 * How a stage's command is started and stopped: directly, as `/bin/sh -c cmd` in a
 * process group of its own, inside a sandbox (bubblewrap-launcher.ts), as another user
 * (stage-user-launcher.ts), or both. The engine is
 * given one per run, so that the runner and the local CLI can each choose.
 */
export interface StageLauncher {
  /**
   * Whether it applies stages' `resources` (the Slurm launcher); a launcher that runs
   * stages on this machine does not, and the engine refuses or ignores them, saying which.
   */
  readonly honoursResources?: boolean;
  /**
   * What runs `/bin/sh -c cmd` with `cwd` as its working directory. `writable` names
   * directories of this one stage that a sandbox must let it write too (where its Python
   * processes report what they read).
   */
  launch(cmd: string, cwd: string, writable?: readonly string[], stage?: LaunchedStage): StageLaunch;
  /**
   * Why a launched program that failed did, when the launcher knows better than "exited
   * with code N": the batch system ended its job (the Slurm launcher: TIMEOUT,
   * OUT_OF_MEMORY), as its attach process reported on descriptor 3 (`end`); null
   * otherwise. Never read from the exit code, which the job's own command may choose.
   */
  explainExit?(end: JobEnd): string | null;
  /**
   * Whether a stage that failed was ended by no fault of the run (a Slurm job requeued or
   * preempted, as reported in `end`): the run is then given back for another attempt,
   * rather than failed, where the runner can.
   */
  givesBack?(end: JobEnd): boolean;
  /**
   * Whether a launch for the stage would re-attach to a job submitted before (by a runner
   * restarted since), still writing the stage's outputs: the engine then leaves them be.
   */
  reattaches?(stage: LaunchedStage): boolean;
  /**
   * What the stage's launch used (a Slurm job's CPU- and GPU-seconds), once it ended; null
   * when unknown. `signal` is the run's: once it is aborted, nothing is waited for.
   */
  usage?(stage: LaunchedStage, signal?: AbortSignal): Promise<StageUsage | null>;
  /**
   * Told that what the last `launch` started has ended, before the engine reads the
   * checkout again (the stage user launcher takes the checkout back: the runner's git
   * refuses a repository another user owns).
   */
  ended?(): void;
  /**
   * Sends `signal` to every process of the stage started as `pid` (the spawned
   * process, whose group is its own). A process already gone is no error.
   */
  signal(pid: number, signal: NodeJS.Signals): void;
  /**
   * Told, as soon as it is spawned, the pid (and process group id) of what a launch
   * started (a runner records it: stage-groups.ts). Must not throw.
   */
  started?(pid: number): void;
  /** Told that no process of the group started as `pid` is left. Must not throw. */
  gone?(pid: number): void;
}

/** Runs stages as the engine's own user, stopped through their process group. */
export const directLauncher: StageLauncher = {
  launch: (cmd) => ({ file: '/bin/sh', args: ['-c', cmd] }),
  signal: (pid, signal) => signalGroup(pid, signal),
};

/** Signals every process of the group; one that is already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    // ESRCH: nothing left. EPERM: the id now names someone else's group.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') throw error;
  }
}

/**
 * Whether any process of the group is left. EPERM counts as one: a group of another
 * user's (the stage user's) exists though it cannot be signalled.
 */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits until no process of the group is left, at most `waitMs` (a killed orphan stays in
 * the process table until init reaps it, which some container inits never do); whether it
 * is gone.
 */
export async function groupGone(pgid: number, waitMs: number): Promise<boolean> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    if (!groupExists(pgid)) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((wake) => setTimeout(wake, 10));
  }
}
