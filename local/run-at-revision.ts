import type { Run } from '../schemas/tables/runs.js';
import { findBaseline } from '../store/runs/find-baseline.js';
import { firstParentCommits } from '../runner/workspace/first-parent-commits.js';
import { LOCAL_REPOSITORY } from './local-state.js';
import type { ProjectStore } from './open-project-store.js';

/** The run that stands for a git revision, and how far from it that run was made. */
export interface RevisionRun {
  /** As the user wrote it: `main`, `HEAD~1`. */
  revision: string;
  /** The commit the revision names. */
  commit: string;
  run: Run;
  /** 0 when the run is at `commit`; else how many first-parent commits back. */
  behind: number;
}

/**
 * The run that stands for `commit` (what `revision` names), as a baseline is found
 * (DESIGN §7): a clean, successful run of this pipeline at the commit, else at its nearest
 * first-parent ancestor with one; among a commit's runs, one with `paramsDigest` first,
 * then the newest. Null when none of its last 200 first-parent commits has such a run.
 */
export async function runAtRevision(
  store: ProjectStore,
  {
    revision,
    commit,
    paramsDigest,
    excludeRunId,
  }: { revision: string; commit: string; paramsDigest: string; excludeRunId: string },
): Promise<RevisionRun | null> {
  const commits = await firstParentCommits(store.project.workspace.repoRoot, commit);
  const run = await findBaseline({
    db: store.state.db,
    repository: LOCAL_REPOSITORY,
    pipelinePath: store.project.pipelinePath,
    commits,
    excludeRunId,
    paramsDigest,
  });
  if (!run) return null;
  return { revision, commit, run, behind: Math.max(0, commits.indexOf(run.commit ?? '')) };
}
