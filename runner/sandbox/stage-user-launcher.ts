import { chownTree } from './chown-tree.js';
import { killUserProcesses } from './kill-user-processes.js';
import type { LaunchedStage, StageLaunch, StageLauncher } from './stage-launcher.js';
import type { StageUser } from './stage-user.js';

export interface StageUserLauncherOptions {
  /** The dedicated user the stages run as. */
  user: StageUser;
  /** The run's checkout: the stage user's for the run (the runner takes it back after). */
  checkout: string;
  /** How the command is started otherwise: directly, or in bubblewrap (then bwrap runs as the user). */
  inner: StageLauncher;
}

/**
 * Runs each stage (and the fingerprint command) as a dedicated unprivileged user
 * (`fluksio runner --stage-user`): file permissions then keep the runner's token file,
 * its `--env-file`, the mirrors, the blob cache and other runs' checkouts out of reach,
 * and `/proc/<runner>/environ` is another user's. Before each start the whole checkout is
 * handed to the user, what the engine wrote there since (restored outs, out directories)
 * included, so the stage can write where it may, and so are the stage's own `writable`
 * directories outside it (where its Python processes report what they read: the engine
 * makes them private to itself). When a stage ends, every process of the
 * user is killed, `setsid` daemons included: the user must be dedicated to this runner's
 * stages, and one stage runs at a time (the runner refuses --stage-user with --jobs or
 * --concurrency above 1). Then the checkout is the runner's again (`ended`): its git
 * reads the code after each stage, and refuses a repository another user owns — which
 * it must, as a `.git` the stage user owns could run the user's commands as the runner.
 */
export class StageUserLauncher implements StageLauncher {
  /** What the last launch handed to the user: taken back when it ends. */
  private handed: string[] = [];

  constructor(private readonly options: StageUserLauncherOptions) {}

  launch(cmd: string, cwd: string, writable: readonly string[] = [], stage?: LaunchedStage): StageLaunch {
    const { user, checkout, inner } = this.options;
    // Nothing of the user may run while its checkout is walked: a daemon the fingerprint
    // command left could swap a directory for a symlink and have /etc handed over.
    killUserProcesses(user);
    this.handed = [checkout, ...writable];
    for (const dir of this.handed) chownTree(dir, user.uid, user.gid);
    return { ...inner.launch(cmd, cwd, writable, stage), user: { uid: user.uid, gid: user.gid } };
  }

  ended(): void {
    // Nothing of the user may run while the tree is walked, as in launch.
    killUserProcesses(this.options.user);
    const runner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    for (const dir of this.handed) chownTree(dir, runner.uid, runner.gid);
    this.handed = [];
    this.options.inner.ended?.();
  }

  signal(pid: number, signal: NodeJS.Signals): void {
    this.options.inner.signal(pid, signal);
    if (signal === 'SIGKILL') killUserProcesses(this.options.user);
  }
}
