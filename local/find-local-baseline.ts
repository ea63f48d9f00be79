import type { Stamp } from '../schemas/stamp.js';
import type { Run } from '../schemas/tables/runs.js';
import { firstParentCommits } from '../runner/workspace/first-parent-commits.js';
import type { LocalState } from './local-state.js';
import type { LocalProject } from './locate-project.js';

/**
 * The baseline of a local run (DESIGN §7) among the runs the store holds: at the given
 * ancestry, or else at the run's commit, or else at its nearest first-parent ancestor
 * with one; null for a run with no commit. The default ancestry is asked of git only when
 * the commit itself has no run to compare with: a rerun at a commit already run here
 * starts no git process for it.
 */
export async function findLocalBaseline(options: {
  state: LocalState;
  project: LocalProject;
  stamp: Pick<Stamp, 'commit' | 'paramsDigest'>;
  /** The commits to look at, nearest first; null for the commit's own ancestry. */
  givenAncestry: Promise<string[]> | null;
}): Promise<Run | null> {
  const { state, project, stamp } = options;
  const baselineAt = (commits: readonly string[]) =>
    state.index.baseline({ pipelinePath: project.pipelinePath, commits, paramsDigest: stamp.paramsDigest });
  if (options.givenAncestry) return baselineAt(await options.givenAncestry);
  if (stamp.commit === null) return null;
  return (
    (await baselineAt([stamp.commit])) ??
    (await baselineAt(await firstParentCommits(project.workspace.repoRoot, stamp.commit)))
  );
}
