import { interpolateCommand } from '../../core/pipeline/interpolate-command.js';
import { commandInterpreters, repositoryPrograms } from './command-interpreters.js';
import type { InterpreterDigests } from './interpreter-digests.js';
import type { LauncherProbe } from './launched-python.js';
import { stageKeyInputs, type StageKeyInputsOptions, type StageKeyMaterial } from './stage-key-inputs.js';

/**
 * A stage's key material as its execution computes it: the programs its interpolated
 * command starts, found on the stage's keyed `PATH`, and everything stageKeyInputs gathers.
 * Shared by a run (executeStage) and a plan (planPipeline), so both key a stage alike.
 */
export async function readStageMaterial(
  options: Omit<StageKeyInputsOptions, 'interpreters' | 'commandPath'> & {
    interpreterDigests: InterpreterDigests;
    /** Asks a Python launcher which interpreter it starts (makeLauncherProbe). */
    probeLauncher: LauncherProbe;
  },
): Promise<StageKeyMaterial> {
  const stage = options.pipeline.stages[options.stage];
  if (!stage) throw new Error(`No stage named ${options.stage}`);
  const { workspace } = options;
  const cmd = interpolateCommand(stage.cmd, options.params);
  const found = {
    path: options.env.PATH ?? '',
    cwd: workspace.pipelineDir,
    repoRoot: workspace.repoRoot,
    digests: options.interpreterDigests,
  };
  const interpreters = await commandInterpreters(cmd, { ...found, probeLauncher: options.probeLauncher });
  return stageKeyInputs({
    ...options,
    interpreters,
    repositoryPrograms: await repositoryPrograms(cmd, found),
    commandPath: options.env.PATH ?? undefined,
  });
}
