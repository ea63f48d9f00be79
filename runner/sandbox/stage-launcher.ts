/** The program a stage's command is started with, and its arguments. */
export interface StageLaunch {
  file: string;
  args: string[];
  /** Started as this user and group instead of the engine's (stage-user-launcher.ts). */
  user?: { uid: number; gid: number };
}

/**
 * How a stage's command is started and stopped: directly, as `/bin/sh -c cmd` in a
 * process group of its own, inside a sandbox (bubblewrap-launcher.ts), as another user
 * (stage-user-launcher.ts), or both. The engine is
 * given one per run, so that the runner and the local CLI can each choose.
 */
export interface StageLauncher {
  /**
   * What runs `/bin/sh -c cmd` with `cwd` as its working directory. `writable` names
   * directories of this one stage that a sandbox must let it write too (where its Python
   * processes report what they read).
   */
  launch(cmd: string, cwd: string, writable?: readonly string[]): StageLaunch;
  /**
   * Sends `signal` to every process of the stage started as `pid` (the spawned
   * process, whose group is its own). A process already gone is no error.
   */
  signal(pid: number, signal: NodeJS.Signals): void;
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
