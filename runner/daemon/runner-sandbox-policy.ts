import { detectBubblewrap } from '../sandbox/detect-bubblewrap.js';
import type { StageUser } from '../sandbox/stage-user.js';
import type { SandboxPolicy } from './run-sandbox.js';
import type { RunnerDaemonOptions } from './runner-daemon-options.js';

/**
 * The runner's sandbox policy (run-sandbox.ts), from its options: what bubblewrap can do
 * here for the stage user (if any), and what no sandboxed stage may see. Throws when
 * `--sandbox` asks for a sandbox that cannot run here.
 */
export async function runnerSandboxPolicy(
  options: RunnerDaemonOptions,
  workDir: string,
  stageUser: StageUser | null,
): Promise<SandboxPolicy> {
  const slurm = options.backend === 'slurm';
  const sandbox: SandboxPolicy = {
    detection: await detectBubblewrap(options.environment, stageUser),
    workDir,
    always: options.sandbox ?? false,
    hidden: [workDir, ...(options.hiddenPaths ?? [])],
    hiddenFromForks: options.environment.HOME ? [options.environment.HOME] : [],
    stageUser,
    slurm: slurm
      ? {
          ...(options.slurmUnstartableGraceMs !== undefined
            ? { unstartableGraceMs: options.slurmUnstartableGraceMs }
            : {}),
        }
      : false,
  };
  if (sandbox.always && sandbox.detection.bubblewrap === null) {
    throw new Error(`--sandbox: ${sandbox.detection.reason}`);
  }
  return sandbox;
}
