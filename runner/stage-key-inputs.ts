import { join } from 'node:path';
import { CACHE_KEY_VERSION, type KeyInputs } from '../schemas/key-inputs.js';
import { interpolateCommand } from '../schemas/interpolate-command.js';
import type { OutRecord } from '../schemas/out-record.js';
import { normalizePipelinePath } from '../schemas/pipeline-paths.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { Params } from '../schemas/resolve-params.js';
import { codeDigest, type CodeDigest } from './code-digest.js';
import type { CodeIndex } from './code-index.js';
import { contentDigest, fileDigestWithMode } from './content-digest.js';
import { repoPathIn, type Workspace } from './workspace.js';

export interface StageKeyInputsOptions {
  workspace: Workspace;
  pipeline: Pipeline;
  stage: string;
  params: Params;
  codeIndex: CodeIndex;
  /** Values of the pipeline's `env` variables, as the stages will see them. */
  env: Readonly<Record<string, string | null>>;
  fingerprint: string | null;
  /** Outs this run already produced or restored, by normalized pipeline path. */
  produced: ReadonlyMap<string, OutRecord>;
}

/** A stage's key inputs, and the code files behind its code digest. */
export interface StageKeyMaterial {
  inputs: KeyInputs;
  code: CodeDigest | null;
}

/**
 * Gathers everything a stage's result depends on (DESIGN §5), after its upstream
 * stages have finished: the interpolated command, each dep's content digest (an out of
 * this run by the digest it was stored under, anything else read from disk, so a
 * touched mtime changes nothing; a file's executable bit counts), the listed params, the declared outs, the code digest
 * of the stage's scope, the `env` values and the fingerprint.
 */
export async function stageKeyInputs(options: StageKeyInputsOptions): Promise<StageKeyMaterial> {
  const { workspace, pipeline, stage: name, params } = options;
  const stage = pipeline.stages[name];
  if (!stage) throw new Error(`No stage named ${name}`);

  const deps: Record<string, string> = {};
  for (const dep of stage.deps) {
    const path = normalizePipelinePath(dep);
    const produced = options.produced.get(path);
    deps[path] = produced
      ? producedDigest(produced)
      : (await contentDigest(join(workspace.pipelineDir, path))).digest;
  }

  let code: CodeDigest | null = null;
  if (stage.code !== false) {
    const everyOut = Object.values(pipeline.stages).flatMap((each) => [...each.outs, ...each.metrics]);
    code = codeDigest(options.codeIndex, {
      pipelineDir: workspace.pipelineDirInRepo,
      include: stage.code ?? pipeline.code ?? null,
      exclude: [...stage.deps, ...everyOut].map((path) => repoPathIn(workspace, path)),
    });
  }

  const inputs: KeyInputs = {
    version: CACHE_KEY_VERSION,
    cmd: interpolateCommand(stage.cmd, params),
    deps,
    params: Object.fromEntries(stage.params.map((param) => [param, params[param] as Params[string]])),
    outs: stage.outs.map(normalizePipelinePath),
    metrics: stage.metrics.map(normalizePipelinePath),
    code: code ? { digest: code.digest, manifest: null } : null,
    env: Object.fromEntries(pipeline.env.map((variable) => [variable, options.env[variable] ?? null])),
    fingerprint: options.fingerprint,
  };
  return { inputs, code };
}

/** An out of this run as a dep: a file as contentDigest would give it, mode included; a directory by its manifest. */
function producedDigest(record: OutRecord): string {
  return record.kind === 'file'
    ? fileDigestWithMode(record.digest, record.executable === true)
    : record.digest;
}
