import { join } from 'node:path';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import { interpolateCommand } from '../../core/pipeline/interpolate-command.js';
import type { OutRecord } from '../../schemas/out-record.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { Params } from '../../core/params/resolve-params.js';
import { codeDigest, type CodeDigest, type CodeScope } from './code-digest.js';
import type { CodeIndex } from './code-index.js';
import { contentDigest, fileDigestWithMode } from './content-digest.js';
import { whyNotPython } from './why-not-python.js';
import { repoPathIn, type Workspace } from '../workspace/workspace.js';

export interface StageKeyInputsOptions {
  workspace: Workspace;
  pipeline: Pipeline;
  stage: string;
  params: Params;
  codeIndex: CodeIndex;
  /** The keyed variables of the stage's environment (`keyedEnvironment`): `PATH` and the pipeline's `env`. */
  env: Readonly<Record<string, string | null>>;
  /** The programs the command starts (`commandInterpreters`). */
  interpreters: KeyInputs['interpreters'];
  /**
   * The programs the command starts that are files of the repository (`repositoryPrograms`):
   * keyed in a traced stage's inputs, which hold no code digest. @defaultValue none
   */
  repositoryPrograms?: KeyInputs['interpreters'];
  fingerprint: string | null;
  /** Outs this run already produced or restored, by normalized pipeline path. */
  produced: ReadonlyMap<string, OutRecord>;
  /**
   * Dep digests taken as given, by normalized pipeline path: a plan's guess at what an
   * upstream stage that has not run yet will make (planPipeline). @defaultValue none
   */
  assumed?: ReadonlyMap<string, string>;
  /** The stage's `PATH`, to tell whether its command starts a Python interpreter. */
  commandPath: string | undefined;
}

/** A stage's key inputs, and the code files behind its code digest and the scope they came from. */
export interface StageKeyMaterial {
  /**
   * The key inputs of the stage run untraced: the code digest of its scope (its `code`
   * globs, else the whole repository's code). For a command that is not Python,
   * `untraced` says why.
   */
  inputs: KeyInputs;
  code: CodeDigest | null;
  codeScope: CodeScope | null;
  /**
   * For a Python command (and a stage keyed on code): the same inputs with only its
   * `code` globs' digest, if any, and no read set yet. Its manifest key finds the entries
   * whose read sets a lookup checks; the read set is added once the stage ran traced.
   */
  traceable: KeyInputs | null;
  /**
   * The stamp (ContentDigest) of each dep read from disk, by normalized pipeline path: what
   * the after-check compares, so a dep edited and put back while the stage ran is caught.
   */
  depStamps: Record<string, string>;
}

/**
 * Gathers everything a stage's result depends on (DESIGN §5), after its upstream
 * stages have finished: the interpolated command, each dep's content digest (an out of
 * this run by the digest it was stored under, anything else read from disk, so a
 * touched mtime changes nothing; a file's executable bit counts), the listed params, the
 * declared outs, the code digest of the stage's scope, the keyed environment, the
 * programs the command starts and the fingerprint; and, for a Python command, the inputs
 * a traced execution is keyed on instead of the whole code (issue 8, "Precision").
 */
export async function stageKeyInputs(options: StageKeyInputsOptions): Promise<StageKeyMaterial> {
  const { workspace, pipeline, stage: name, params } = options;
  const stage = pipeline.stages[name];
  if (!stage) throw new Error(`No stage named ${name}`);

  const deps: Record<string, string> = {};
  const depStamps: Record<string, string> = {};
  for (const dep of stage.deps) {
    const path = normalizePipelinePath(dep);
    const produced = options.produced.get(path);
    const assumed = options.assumed?.get(path);
    if (assumed !== undefined) deps[path] = assumed;
    else if (produced) deps[path] = producedDigest(produced);
    else {
      const content = await contentDigest(join(workspace.pipelineDir, path));
      deps[path] = content.digest;
      depStamps[path] = content.stamp;
    }
  }

  let code: CodeDigest | null = null;
  let codeScope: CodeScope | null = null;
  let globs: CodeDigest | null = null;
  let untraced: string | null = null;
  const cmd = interpolateCommand(stage.cmd, params);
  if (stage.code !== false) {
    const everyOut = Object.values(pipeline.stages).flatMap((each) => [...each.outs, ...each.metrics]);
    codeScope = {
      pipelineDir: workspace.pipelineDirInRepo,
      include: stage.code ?? pipeline.code ?? null,
      exclude: [...stage.deps, ...everyOut].map((path) => repoPathIn(workspace, path)),
    };
    code = codeDigest(options.codeIndex, codeScope);
    globs = codeScope.include === null ? null : code;
    untraced = await whyNotPython(cmd, { cwd: workspace.pipelineDir, path: options.commandPath });
  }

  const inputs: KeyInputs = {
    version: CACHE_KEY_VERSION,
    template: stage.cmd,
    cmd,
    deps,
    params: Object.fromEntries(stage.params.map((param) => [param, params[param] as Params[string]])),
    outs: stage.outs.map(normalizePipelinePath),
    metrics: stage.metrics.map(normalizePipelinePath),
    ...(stage.plots?.length
      ? { plots: stage.plots.map((plot) => ({ ...plot, path: normalizePipelinePath(plot.path) })) }
      : {}),
    code: code ? { digest: code.digest, manifest: null } : null,
    env: { ...options.env },
    interpreters: options.interpreters,
    fingerprint: options.fingerprint,
    readSet: null,
    untraced,
    ...(pipeline.params_file === undefined ? {} : { paramsFile: pipeline.params_file }),
    ...(workspace.pipelineDirInRepo === '' ? {} : { pipelineDir: workspace.pipelineDirInRepo }),
  };
  const traceable =
    stage.code !== false && untraced === null
      ? {
          ...inputs,
          code: globs ? { digest: globs.digest, manifest: null } : null,
          interpreters: { ...inputs.interpreters, ...options.repositoryPrograms },
        }
      : null;
  return { inputs, code, codeScope, traceable, depStamps };
}

/** An out of this run as a dep: a file as contentDigest would give it, mode included; a directory by its manifest. */
function producedDigest(record: OutRecord): string {
  return record.kind === 'file'
    ? fileDigestWithMode(record.digest, record.executable === true)
    : record.digest;
}
