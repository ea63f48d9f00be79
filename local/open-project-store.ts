import { existsSync } from 'node:fs';
import type { MetricGoals } from '../schemas/metric-diff.js';
import type { Run } from '../schemas/tables/runs.js';
import { DiskBlobStore } from '../runner/blobs/disk-blob-store.js';
import { firstParentCommits } from '../runner/workspace/first-parent-commits.js';
import type { StageCache } from '../runner/ports.js';
import type { Database } from '../store/db/database.js';
import { findBaseline } from '../store/runs/find-baseline.js';
import { AmbiguousRunPrefixError } from '../store/runs/ambiguous-run-prefix-error.js';
import { findRun } from '../store/runs/find-run.js';
import { LocalDatabaseDamagedError } from '../store/db/local-database-damaged-error.js';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import type { CliIo } from '../present/terminal/cli-io.js';
import { UsageError } from '../present/terminal/usage-error.js';
import { eq } from 'drizzle-orm';
import { runs } from '../schemas/tables/runs.js';
import { LocalIndex } from './local-index.js';
import { indexStageCache, LOCAL_REPOSITORY } from './local-state.js';
import { localStorePaths } from './local-store-paths.js';
import { NoRunsYetError } from './no-runs-yet-error.js';
import { locateProject, readProjectPipeline, type LocalProject } from './locate-project.js';
import { syncLocalJournal } from './sync-local-journal.js';
import { userCacheDir } from './user-cache-dir.js';

/** A project's history, read from its embedded database. */
export interface ProjectState {
  db: Database;
  blobs: DiskBlobStore;
  /** The stage cache as `fluksio run` reads it (the store's index), for runs of one pipeline. */
  cacheFor(run: { pipelinePath: string }): StageCache;
  close(): Promise<void>;
}

/** A project's store opened for reading runs, with the metric goals its pipeline declares. */
export interface ProjectStore {
  project: LocalProject;
  state: ProjectState;
  goals: MetricGoals;
}

/**
 * Opens the store of the pipeline named by `--pipeline` (or `fluksio.yml` here) for the
 * read commands: the embedded database, first brought up to date from the run journals.
 * A project that never ran has no store: that is said, not created. A damaged database
 * is said with the way to recover (`fluksio doctor --repair`).
 */
export async function openProjectStore(pipelineOption: string | undefined, io: CliIo): Promise<ProjectStore> {
  const project = await locateProject(pipelineOption, io.cwd);
  const paths = localStorePaths(project.stateDir);
  if (!existsSync(paths.journalDir) && !existsSync(paths.databaseDir)) {
    throw new NoRunsYetError(project.displayPath);
  }
  // Goals only colour the diff; a pipeline broken since does not hide the runs.
  const goals = await readProjectPipeline(project).then(
    (pipeline) => pipeline.metrics,
    () => ({}),
  );
  const database = await openLocalDatabase(paths.databaseDir, {
    waitMs: 120_000,
    templateRoot: userCacheDir(io.env),
  }).catch((error: unknown) => {
    throw error instanceof LocalDatabaseDamagedError
      ? new Error(damagedStoreMessage(error), { cause: error })
      : error;
  });
  try {
    await syncLocalJournal(database.db, paths.journalDir);
  } catch (error) {
    await database.close();
    throw new Error(damagedStoreMessage(new LocalDatabaseDamagedError(paths.databaseDir, { cause: error })), {
      cause: error,
    });
  }
  return {
    project,
    state: {
      db: database.db,
      blobs: new DiskBlobStore(paths.blobDir),
      cacheFor: (run) => indexStageCache(new LocalIndex(paths.indexDir), run.pipelinePath),
      close: database.close,
    },
    goals,
  };
}

/** What a user reads when the database does not open: what is wrong, what is safe, what to run. */
export function damagedStoreMessage(error: LocalDatabaseDamagedError): string {
  return `${error.message}.
Your runs are kept in the run journals and your cached outputs in the blobs beside it, so nothing is lost:
"fluksio doctor" checks the store, and "fluksio doctor --repair" rebuilds the database from the journals,
moving the damaged one aside (never deleting it). "fluksio run" still works meanwhile.`;
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

/**
 * The baseline of a recorded run (DESIGN §7): the one fixed when it finished, so a run is
 * never shown against one made later; for a run from before baselines were fixed, the
 * nearest first-parent ancestor with a clean success.
 */
export async function baselineOf(store: ProjectStore, run: Run): Promise<Run | null> {
  if (run.baselineFixed) {
    if (run.baselineRunId === null) return null;
    const [fixed] = await store.state.db.select().from(runs).where(eq(runs.id, run.baselineRunId));
    return fixed ?? null;
  }
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
