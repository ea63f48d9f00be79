import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { Run } from '../../schemas/tables/runs.js';
import { firstParentCommits } from '../../runner/first-parent-commits.js';
import { findBaseline } from '../../store/find-baseline.js';
import { AmbiguousRunPrefixError } from '../../store/ambiguous-run-prefix-error.js';
import { findRun } from '../../store/find-run.js';
import type { CliIo } from '../cli-io.js';
import { UsageError } from '../usage-error.js';
import { LOCAL_REPOSITORY, openLocalState, type LocalState } from './local-state.js';
import { locateProject, readProjectPipeline, type LocalProject } from './locate-project.js';

/** A project's store opened for reading runs, with the metric goals its pipeline declares. */
export interface ProjectStore {
  project: LocalProject;
  state: LocalState;
  goals: MetricGoals;
}

/**
 * Opens the store of the pipeline named by `--pipeline` (or `fluksio.yml` here) for the
 * read commands. A project that never ran has no store: that is said, not created.
 */
export async function openProjectStore(pipelineOption: string | undefined, io: CliIo): Promise<ProjectStore> {
  const project = await locateProject(pipelineOption, io.cwd);
  if (!existsSync(join(project.stateDir, 'db'))) {
    throw new UsageError(`No runs yet for ${project.displayPath}: start one with "fluksio run"`);
  }
  // Goals only colour the diff; a pipeline broken since does not hide the runs.
  const goals = await readProjectPipeline(project).then(
    (pipeline) => pipeline.metrics,
    () => ({}),
  );
  const state = await openLocalState(project.stateDir);
  return { project, state, goals };
}

/** The run a user named by id or unique prefix; UsageError when none or several match. */
export async function requireRun(store: ProjectStore, idOrPrefix: string): Promise<Run> {
  try {
    const run = await findRun({ db: store.state.db, idOrPrefix });
    if (!run) throw new UsageError(`No run matches "${idOrPrefix}" (see fluksio runs)`);
    return run;
  } catch (error) {
    if (error instanceof AmbiguousRunPrefixError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
}

/** The baseline of a recorded run (DESIGN §7): nearest first-parent ancestor with a success. */
export async function baselineOf(store: ProjectStore, run: Run): Promise<Run | null> {
  const commits = run.commit ? await firstParentCommits(store.project.workspace.repoRoot, run.commit) : [];
  return findBaseline({
    db: store.state.db,
    repository: LOCAL_REPOSITORY,
    pipelinePath: run.pipelinePath,
    commits,
    excludeRunId: run.id,
    paramsDigest: run.paramsDigest,
  });
}
