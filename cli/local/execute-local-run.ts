import { join } from 'node:path';
import { ulid } from 'ulid';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { Params } from '../../schemas/resolve-params.js';
import { buildRunReport, type RunReport } from '../../schemas/run-report.js';
import type { Stamp } from '../../schemas/stamp.js';
import type { CodeIndex } from '../../runner/code-index.js';
import { computeStamp } from '../../runner/compute-stamp.js';
import { firstParentCommits } from '../../runner/first-parent-commits.js';
import { InterpreterDigests } from '../../runner/interpreter-digests.js';
import type { EventSink } from '../../runner/ports.js';
import { runPipeline, type RunOutcome } from '../../runner/run-pipeline.js';
import { createRun } from '../../store/create-run.js';
import { findBaseline } from '../../store/find-baseline.js';
import { finishRun } from '../../store/finish-run.js';
import { getRunDetail, type RunDetail } from '../../store/get-run-detail.js';
import { teeSinks } from '../render/progress-printer.js';
import { LOCAL_REPOSITORY, type LocalState } from './local-state.js';
import type { LocalProject } from './locate-project.js';
import { storeEventSink } from './store-event-sink.js';

export interface LocalRunOptions {
  project: LocalProject;
  /** The validated pipeline. */
  pipeline: Pipeline;
  /** One complete, typed parameter set. */
  params: Params;
  /** The working tree's code index, read after the store's lock was taken. */
  codeIndex: CodeIndex;
  state: LocalState;
  /**
   * What stages' basics and the pipeline's `env` values are taken from (the CLI passes
   * process.env; the action a copy without its inputs and tokens).
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Stages executing at once. */
  jobs: number;
  noCache: boolean;
  /** The sweep this run belongs to, and its place in the grid; null for a single run. */
  groupId: string | null;
  groupIndex: number | null;
  /** Where the engine's events go besides the store: a terminal's progress, a workflow log's groups. */
  progress: EventSink;
  /** Cancels the run. */
  signal?: AbortSignal;
  /** Called once the run is recorded, before any stage starts (to print its header). */
  onStart?(run: { id: string; stamp: Stamp }): void;
  /**
   * The commits a baseline is looked for at, nearest first (DESIGN §7).
   * @defaultValue the first-parent ancestry of the run's commit
   */
  baselineCommits?(stamp: Stamp): Promise<string[]>;
}

/** A finished local run: its report, its rows, and what the engine said about it. */
export interface LocalRunResult {
  report: RunReport;
  detail: RunDetail;
  outcome: RunOutcome;
}

/**
 * One run of a pipeline in this working tree, recorded in the embedded store: stamps it,
 * records it `running`, executes the stage graph (the store and `progress` both get every
 * event), records how it ended, and finds its baseline. Shared by `fluksio run` and the
 * action's local mode, which differ only in how they show it.
 */
export async function executeLocalRun(options: LocalRunOptions): Promise<LocalRunResult> {
  const { project, pipeline, params, codeIndex, state } = options;
  const stamp = computeStamp({
    workspace: project.workspace,
    pipeline,
    params,
    codeIndex,
    environment: options.environment,
  });
  const runId = ulid();
  await createRun({
    db: state.db,
    run: {
      id: runId,
      repository: LOCAL_REPOSITORY,
      pipelinePath: project.pipelinePath,
      groupId: options.groupId,
      groupIndex: options.groupIndex,
      commit: stamp.commit,
      dirty: stamp.dirty,
      codeDigest: stamp.codeDigest,
      params: stamp.params,
      paramsDigest: stamp.paramsDigest,
      envDigest: stamp.envDigest,
      noCache: options.noCache,
      status: 'running',
      startedAt: new Date(),
    },
  });
  options.onStart?.({ id: runId, stamp });

  // The baseline's ancestry walk is git's work: it runs while the stages do.
  const ancestry = (
    options.baselineCommits
      ? options.baselineCommits(stamp)
      : stamp.commit
        ? firstParentCommits(project.workspace.repoRoot, stamp.commit)
        : Promise.resolve([])
  ).catch((): string[] => []);
  const outcome = await runPipeline({
    runId,
    workspace: project.workspace,
    pipeline,
    params,
    codeIndex,
    interpreterDigests: new InterpreterDigests(join(project.stateDir, 'interpreter-digests.json')),
    environment: options.environment,
    jobs: options.jobs,
    noCache: options.noCache,
    cache: state.cacheFor({ id: runId, pipelinePath: project.pipelinePath }),
    blobs: state.blobs,
    events: teeSinks(storeEventSink(state.db, runId), options.progress),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await finishRun({
    db: state.db,
    runId,
    status: outcome.status,
    reason: outcome.reason,
    metrics: outcome.metrics,
    dirtyReasons: outcome.dirtyReasons,
  });

  const baseline = await findBaseline({
    db: state.db,
    repository: LOCAL_REPOSITORY,
    pipelinePath: project.pipelinePath,
    commits: await ancestry,
    excludeRunId: runId,
    paramsDigest: stamp.paramsDigest,
  });
  const detail = await getRunDetail({ db: state.db, runId });
  if (!detail) throw new Error(`Run ${runId} vanished from the local store`);
  return { report: buildRunReport(detail, baseline, pipeline.metrics), detail, outcome };
}
