import { interpolateCommand } from '../../core/pipeline/interpolate-command.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { makePrivateDir } from '../sandbox/private-dir.js';
import { keyedEnvironment, stageEnvironment } from '../sandbox/stage-environment.js';
import type { StageLauncher } from '../sandbox/stage-launcher.js';
import type { Workspace } from '../workspace/workspace.js';
import { commandInterpreters } from './command-interpreters.js';
import type { InterpreterDigests } from './interpreter-digests.js';
import { makeLauncherProbe, type LauncherProbe } from './launched-python.js';

/** A launcher probe already asking, and how to stop it. */
export interface StartedLauncherProbe {
  probe: LauncherProbe;
  /** Stops what is still asking (no stage came to need it) and waits until it has stopped. */
  close(): Promise<void>;
}

/**
 * A run's Python-launcher probe (makeLauncherProbe), started at once: every launcher the
 * given stages' commands start, for each of `paramSets`, is asked side by side which
 * interpreter it starts, so that a slow one (pyenv's shim takes about 0.3 s of bash)
 * answers while the rest of the run is read instead of after it, on the first stage's
 * key. The keys read the answers from the probe as they did. What fails here fails again,
 * and is reported, where a stage's key is computed.
 */
export function startLauncherProbe(options: {
  workspace: Workspace;
  pipeline: Pipeline;
  stages: readonly string[];
  paramSets: readonly Params[];
  /** What stages' environments are built from (stageEnvironment's `source`). */
  environment: Readonly<Record<string, string | undefined>>;
  /** Set on top, as on the stages (the run id, the runner's secrets). @defaultValue none */
  extra?: Readonly<Record<string, string>>;
  /** A folder of the caller's, which it removes: the probe's home and temp folders go in it. */
  privateRoot: string;
  launcher?: StageLauncher;
  digests: InterpreterDigests;
}): StartedLauncherProbe {
  const { workspace, pipeline } = options;
  const probing = new AbortController();
  const probe = makeLauncherProbe({
    environment: async () =>
      stageEnvironment({
        source: options.environment,
        pass: pipeline.env,
        extra: options.extra ?? {},
        privateDir: await makePrivateDir(options.privateRoot, '.launcher'),
      }),
    ...(options.launcher ? { launcher: options.launcher } : {}),
    signal: probing.signal,
  });
  const commands = new Set<string>();
  for (const params of options.paramSets) {
    for (const name of options.stages) {
      const stage = pipeline.stages[name];
      if (!stage) continue;
      try {
        commands.add(interpolateCommand(stage.cmd, params));
      } catch {
        // The stage's own key says what is wrong with its command.
      }
    }
  }
  const keyOptions = {
    path: keyedEnvironment(options.environment, pipeline.env).PATH ?? '',
    cwd: workspace.pipelineDir,
    repoRoot: workspace.repoRoot,
    digests: options.digests,
    probeLauncher: probe,
  };
  const asking = Promise.allSettled([...commands].map((cmd) => commandInterpreters(cmd, keyOptions)));
  return {
    probe,
    async close() {
      probing.abort();
      await asking;
    },
  };
}
