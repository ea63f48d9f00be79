import { posix } from 'node:path';
import { simpleGit } from 'simple-git';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { formatProblems } from '../../core/problem.js';
import { loadProjectPipeline } from '../../core/dvc/load-project-pipeline.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * The outs and metrics files a run's pipeline declares, read from the repository in
 * `cwd` at the run's commit (normalized pipeline paths). `fluksio pull` writes only
 * these: the paths a run reports come from a runner, and a runner may be hostile.
 */
export async function declaredOutputs(
  cwd: string,
  commit: string,
  pipelinePath: string,
): Promise<Set<string>> {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(commit)) {
    throw new Error(
      `The control plane reports "${commit}" as the run's commit; expected a full hexadecimal SHA`,
    );
  }
  let text: string;
  try {
    text = await simpleGit({ baseDir: cwd }).show([`${commit}:${pipelinePath}`]);
  } catch {
    throw new UsageError(
      `Cannot read ${pipelinePath} at commit ${commit} in ${cwd}: pull writes only the outputs the run's pipeline declares, so run it in a clone of the repository that has that commit (git fetch origin)`,
    );
  }
  const pipelineDir = posix.dirname(pipelinePath) === '.' ? '' : posix.dirname(pipelinePath);
  const git = simpleGit({ baseDir: cwd });
  const beside = new Map<string, string | undefined>();
  // A dvc.yaml's params.yaml and vars files, as the commit has them (read before translating).
  for (const name of ['params.yaml']) {
    beside.set(name, await git.show([`${commit}:${posix.join(pipelineDir, name)}`]).catch(() => undefined));
  }
  const { pipeline, problems } = loadProjectPipeline({
    file: pipelinePath,
    text,
    pipelineDir,
    readFile: (name) => beside.get(posix.normalize(name)),
  });
  if (!pipeline) {
    throw new UsageError(
      `${pipelinePath} at commit ${commit} is not a valid pipeline, so none of its outputs is pulled:\n${formatProblems(problems, pipelinePath)}`,
    );
  }
  const declared = new Set<string>();
  for (const stage of Object.values(pipeline.stages)) {
    for (const path of [...stage.outs, ...stage.metrics]) declared.add(normalizePipelinePath(path));
  }
  return declared;
}
