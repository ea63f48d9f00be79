import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Params } from '../core/params/resolve-params.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { StagePlan } from '../schemas/stage-plan.js';
import type { StageSelection } from '../schemas/stage-selection.js';
import { DiskBlobStore } from '../runner/blobs/disk-blob-store.js';
import type { CodeIndex } from '../runner/keys/code-index.js';
import { InterpreterDigests } from '../runner/keys/interpreter-digests.js';
import { planPipeline } from '../runner/plan-pipeline.js';
import { LocalIndex } from './local-index.js';
import { indexStageCache, openLocalState } from './local-state.js';
import { localStorePaths } from './local-store-paths.js';
import type { LocalProject } from './locate-project.js';

export interface LocalPlanOptions {
  project: LocalProject;
  pipeline: Pipeline;
  params: Params;
  codeIndex: CodeIndex;
  /** What the pipeline's `env` values and the stages' `PATH` are taken from. */
  environment: Readonly<Record<string, string | undefined>>;
  noCache: boolean;
  selection: StageSelection | null;
  force?: ReadonlySet<string>;
}

/**
 * What `fluksio run` would do here now, stage by stage (planPipeline), read from this
 * project's `.fluksio/` without its lock: the index and the blobs are written whole and
 * renamed into place, so a run recording meanwhile is read before or after a write, never
 * half-way. Only a store whose index is gone takes the lock, to rebuild it from the journals
 * as `fluksio run` would. Nothing learnt (interpreter digests) is saved.
 */
export async function planLocalRun(options: LocalPlanOptions): Promise<StagePlan[]> {
  const { project } = options;
  const paths = localStorePaths(project.stateDir);
  if (existsSync(paths.journalDir) && !existsSync(paths.indexDir)) {
    await (await openLocalState(project.stateDir)).close();
  }
  return planPipeline({
    workspace: project.workspace,
    pipeline: options.pipeline,
    params: options.params,
    codeIndex: options.codeIndex,
    interpreterDigests: new InterpreterDigests(join(project.stateDir, 'interpreter-digests.json')),
    environment: options.environment,
    noCache: options.noCache,
    ...(options.selection ? { stages: options.selection.stages } : {}),
    ...(options.force ? { force: options.force } : {}),
    cache: indexStageCache(new LocalIndex(paths.indexDir), project.pipelinePath),
    blobs: new DiskBlobStore(paths.blobDir),
  });
}
