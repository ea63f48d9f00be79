import { BubblewrapLauncher } from '../sandbox/bubblewrap-launcher.js';
import type { BubblewrapDetection } from '../sandbox/detect-bubblewrap.js';
import { directLauncher, type StageLauncher } from '../sandbox/stage-launcher.js';
import { StageUserLauncher } from '../sandbox/stage-user-launcher.js';
import { describeStageUser, type StageUser } from '../sandbox/stage-user.js';
import { SlurmLauncher, type SlurmLauncherOptions } from '../sandbox/slurm-launcher.js';

/** How a runner sandboxes stages, settled once at start. */
export interface SandboxPolicy {
  /** What `detectBubblewrap` found at start. */
  detection: BubblewrapDetection;
  /** The runner's work directory (real). */
  workDir: string;
  /** `--sandbox`: trusted runs are sandboxed too (fork runs always are). */
  always: boolean;
  /**
   * Masked in every sandbox: the runner's work directory (other slots' checkouts, the
   * mirrors), its token file, its `--env-file`.
   */
  hidden: readonly string[];
  /**
   * Masked too for fork runs: the runner's home (SSH keys, cloud credentials). Trusted
   * runs keep it, read-only, for the interpreters and packages installed there.
   */
  hiddenFromForks: readonly string[];
  /**
   * `--stage-user`: every run's stages (and bwrap, when sandboxed) run as this user; a
   * fork's run counts as sandboxed by it when bubblewrap is missing.
   */
  stageUser: StageUser | null;
  /**
   * `--backend slurm`: every trusted run's stages are Slurm jobs (slurm-launcher.ts, with
   * these options), which this runner does not sandbox, so a fork's run is refused.
   */
  slurm?: SlurmLauncherOptions | false;
}

/** Where one run executes in the runner's work directory. */
export interface RunPaths {
  /** The run's checkout: the one writable directory. */
  checkout: string;
  /** The mirror's objects the checkout borrows: readable, so git works in the stage. */
  borrowedObjects: string;
  /** Where a Slurm runner keeps this attempt's jobs (slurm-job-dir.ts). */
  slurmJobs: string;
}

/** The launcher of one run's stages and what its check run says, or why it cannot run here. */
export type RunSandbox =
  | { launcher: StageLauncher | undefined; sandbox: string | null }
  /** A fork's run on a runner without a sandbox: the reason, for its status. */
  | { refusal: string };

/**
 * Chooses how one run's stages start (DESIGN §6, issue 9): a fork's run always in the
 * sandbox, or not at all on a runner without one; a trusted run in the sandbox with
 * `--sandbox`, else directly. In the sandbox only the run's checkout is writable and the
 * mirror's objects it borrows readable; the rest of the work directory (other slots'
 * checkouts, the mirrors and their configs), the token and the secrets are masked. With
 * `--stage-user`, whichever of those applies runs as the stage user, and that user alone
 * is enough of a sandbox for a fork's run where bubblewrap is missing.
 */
export function runSandbox(policy: SandboxPolicy, fork: boolean, paths: RunPaths): RunSandbox {
  if (policy.slurm) {
    return fork
      ? {
          refusal:
            'This runner executes stages as Slurm jobs, which it does not sandbox: it takes no fork pull request runs',
        }
      : { launcher: new SlurmLauncher(paths.slurmJobs, policy.slurm), sandbox: null };
  }
  const { detection, stageUser } = policy;
  const wantsBubblewrap = fork || policy.always;
  if (wantsBubblewrap && detection.bubblewrap === null && !(fork && stageUser)) {
    return {
      refusal: `This runner executes fork pull requests only in a sandbox, and it has none: ${detection.reason}`,
    };
  }
  let launcher: StageLauncher | undefined;
  let sandbox: string | null = null;
  if (wantsBubblewrap && detection.bubblewrap !== null) {
    launcher = new BubblewrapLauncher(
      stageUser
        ? // bwrap runs as the stage user, who cannot reach what was closed to it (close-work-dir.ts): a
          // bind or a mask there would fail, and the permissions already keep it out.
          {
            bwrap: detection.bubblewrap.path,
            writable: [paths.checkout],
            readOnly: [],
            hidden: [policy.workDir],
          }
        : {
            bwrap: detection.bubblewrap.path,
            writable: [paths.checkout],
            readOnly: [paths.borrowedObjects],
            hidden: fork ? [...policy.hidden, ...policy.hiddenFromForks] : policy.hidden,
          },
    );
    sandbox =
      `${detection.bubblewrap.version}: own user and PID namespaces, read-only system, private /tmp, ` +
      `only the checkout writable; the runner token, its secrets, mirrors, other runs${fork ? ' and its home' : ''} hidden; ` +
      'every process ends with its stage';
  }
  if (stageUser) {
    launcher = new StageUserLauncher({
      user: stageUser,
      checkout: paths.checkout,
      inner: launcher ?? directLauncher,
    });
    sandbox = sandbox
      ? `${sandbox}; as stage user ${describeStageUser(stageUser)}`
      : `stage user ${describeStageUser(stageUser)}: the runner token, its secrets, mirrors and other runs ` +
        'unreadable to it; every process of the user killed when a stage ends';
  }
  return { launcher, sandbox };
}
