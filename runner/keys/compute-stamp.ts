import { digestOf } from '../../core/canonical-json.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { Stamp } from '../../schemas/stamp.js';
import { codeDigest } from './code-digest.js';
import type { CodeIndex } from './code-index.js';
import { repoPathIn, type Workspace } from '../workspace/workspace.js';

/**
 * The stamp of a run about to execute here (DESIGN §5): HEAD, whether the working tree
 * differs from it (outs and metrics files are products, not changes), the code digest of
 * the pipeline's scope (its `code` globs, else every file but the outs), and digests of
 * the params and of the `env` values.
 */
export function computeStamp(options: {
  workspace: Workspace;
  pipeline: Pipeline;
  params: Params;
  codeIndex: CodeIndex;
  environment: Readonly<Record<string, string | undefined>>;
}): Stamp {
  const { workspace, pipeline, codeIndex } = options;
  const outs = Object.values(pipeline.stages)
    .flatMap((stage) => [...stage.outs, ...stage.metrics])
    .map((path) => repoPathIn(workspace, path));
  const isOut = (path: string) => outs.some((out) => path === out || path.startsWith(`${out}/`));
  return {
    commit: codeIndex.commit,
    dirty: [...codeIndex.changed].some((path) => !isOut(path)),
    codeDigest: codeDigest(codeIndex, {
      pipelineDir: workspace.pipelineDirInRepo,
      include: pipeline.code ?? null,
      exclude: outs,
    }).digest,
    params: options.params,
    paramsDigest: digestOf(options.params),
    envDigest: digestOf(
      Object.fromEntries(pipeline.env.map((name) => [name, options.environment[name] ?? null])),
    ),
  };
}
