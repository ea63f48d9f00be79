import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Params } from '../core/params/resolve-params.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { InterpreterDigests } from '../runner/keys/interpreter-digests.js';
import { startLauncherProbe, type StartedLauncherProbe } from '../runner/keys/start-launcher-probe.js';
import { ignoreStateDir } from '../runner/ignore-state-dir.js';
import type { StageLauncher } from '../runner/sandbox/stage-launcher.js';
import type { Workspace } from '../runner/workspace/workspace.js';

/**
 * A local run's Python-launcher probe, started as soon as its pipeline and params are
 * known (the store's lock taken), so that a slow shim answers while the tree is read and
 * the run recorded: given to the run (executeLocalRun's `probeLauncher`). Only for a run
 * in the work tree itself: a sweep member in a scratch copy starts the launchers there,
 * where what a shim reads (an ignored `.python-version`) may differ. Its home and temp
 * folders go under `.fluksio/`, removed by `close`.
 */
export async function startEarlyLauncherProbe(options: {
  workspace: Workspace;
  pipeline: Pipeline;
  stages: readonly string[];
  params: Params;
  environment: Readonly<Record<string, string | undefined>>;
  launcher?: StageLauncher;
  digests: InterpreterDigests;
}): Promise<StartedLauncherProbe> {
  const stateDir = join(options.workspace.pipelineDir, '.fluksio');
  await ignoreStateDir(stateDir);
  const privateRoot = await mkdtemp(join(stateDir, 'launcher-'));
  const started = startLauncherProbe({ ...options, paramSets: [options.params], privateRoot });
  return {
    probe: started.probe,
    async close() {
      await started.close();
      await rm(privateRoot, { recursive: true, force: true }).catch(() => {});
    },
  };
}
