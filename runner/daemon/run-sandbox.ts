import { BubblewrapLauncher } from '../bubblewrap-launcher.js';
import type { BubblewrapDetection } from '../detect-bubblewrap.js';
import type { StageLauncher } from '../stage-launcher.js';

/** How a runner sandboxes stages, settled once at start. */
export interface SandboxPolicy {
  /** What `detectBubblewrap` found at start. */
  detection: BubblewrapDetection;
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
}

/** Where one run executes in the runner's work directory. */
export interface RunPaths {
  /** The run's checkout: the one writable directory. */
  checkout: string;
  /** The mirror's objects the checkout borrows: readable, so git works in the stage. */
  borrowedObjects: string;
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
 * checkouts, the mirrors and their configs), the token and the secrets are masked.
 */
export function runSandbox(policy: SandboxPolicy, fork: boolean, paths: RunPaths): RunSandbox {
  if (!fork && !policy.always) return { launcher: undefined, sandbox: null };
  const { detection } = policy;
  if (detection.bubblewrap === null) {
    return {
      refusal: `This runner executes fork pull requests only in a sandbox, and it has none: ${detection.reason}`,
    };
  }
  return {
    launcher: new BubblewrapLauncher({
      bwrap: detection.bubblewrap.path,
      writable: [paths.checkout],
      readOnly: [paths.borrowedObjects],
      hidden: fork ? [...policy.hidden, ...policy.hiddenFromForks] : policy.hidden,
    }),
    sandbox:
      `${detection.bubblewrap.version}: own user and PID namespaces, read-only system, private /tmp, ` +
      `only the checkout writable; the runner token, its secrets, mirrors, other runs${fork ? ' and its home' : ''} hidden; ` +
      'every process ends with its stage',
  };
}
