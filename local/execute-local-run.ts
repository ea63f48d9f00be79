import { directLauncher, type StageLauncher } from '../runner/sandbox/stage-launcher.js';
import { StageGroups } from '../runner/sandbox/stage-groups.js';
import { join } from 'node:path';
import { runStageGroupsDir } from './local-store-paths.js';
import { newId } from '../core/new-id.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { Params } from '../core/params/resolve-params.js';
import { buildRunReport, type RunReport } from '../schemas/run-report.js';
import type { Stamp } from '../schemas/stamp.js';
import type { StageSelection } from '../schemas/stage-selection.js';
import type { CodeIndex } from '../runner/keys/code-index.js';
import { currentBranch } from '../runner/workspace/current-branch.js';
import { computeStamp } from '../runner/keys/compute-stamp.js';
import { InterpreterDigests } from '../runner/keys/interpreter-digests.js';
import type { LauncherProbe } from '../runner/keys/launched-python.js';
import type { EventSink, StageGate } from '../runner/ports.js';
import { runPipeline, type RunOutcome } from '../runner/run-pipeline.js';
import type { RunDetail } from '../store/runs/get-run-detail.js';
import { teeSinks } from '../runner/tee-sinks.js';
import type { Run } from '../schemas/tables/runs.js';
import { findLocalBaseline } from './find-local-baseline.js';
import { localRunRow } from './local-run-row.js';
import { LocalRunRecorder } from './local-run-recorder.js';
import { LOCAL_REPOSITORY, type LocalState } from './local-state.js';
import type { LocalProject } from './locate-project.js';
import type { LocalTeamCache } from './local-team-cache.js';
import { messageOf } from '../core/text/message-of.js';

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
  /**
   * The stages asked for, when fewer than all (core/pipeline/select-stages.ts): only they
   * run, and the run is recorded as partial. @defaultValue every stage
   */
  selection?: StageSelection | null;
  /** Stages re-run even when cached (`--force`). @defaultValue none */
  force?: ReadonlySet<string>;
  /** Starts stages' commands (runner/slurm-launcher.ts: as Slurm jobs). @defaultValue here */
  launcher?: StageLauncher;
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
  /**
   * A sweep member's baseline: the sweep's, found for its first member, so that every
   * member is compared with the same run and never with another member.
   * @defaultValue looked up for this run
   */
  sweepBaseline?: { run: Run | null };
  /** Shared by the runs of a parallel sweep. @defaultValue kept in `.fluksio/interpreter-digests.json` for this run */
  interpreterDigests?: InterpreterDigests;
  /**
   * Asks Python launchers which interpreter they start, started before the tree was read
   * (startEarlyLauncherProbe). @defaultValue started by the run
   */
  probeLauncher?: LauncherProbe;
  /** Shared by the runs of a parallel sweep, so that a stage they compute alike runs once. */
  gate?: StageGate;
  /**
   * The branch the run is of, for the run lists' filter (the action's: the workflow's).
   * @defaultValue the branch checked out in the work tree; null when HEAD is detached
   */
  branch?: string | null;
  /** Where the `fingerprint` command runs. @defaultValue the pipeline's directory */
  fingerprintDir?: string;
  /**
   * The team's cache, asked when this store misses (`--remote-cache`); its hits are
   * recorded `cachedFromTeam`, and remembered in this store's index. @defaultValue none
   */
  teamCache?: LocalTeamCache;
}

/** A finished local run: its report, its rows, and what the engine said about it. */
export interface LocalRunResult {
  report: RunReport;
  detail: RunDetail;
  outcome: RunOutcome;
  /** The run it was compared with (fixed in its journal); null for none. */
  baseline: Run | null;
}

/**
 * One run of a pipeline in this working tree, recorded in the local store: stamps it,
 * journals it `running`, executes the stage graph (the journal and `progress` both get
 * every event), journals how it ended, and finds its baseline — all without the embedded
 * database, which the commands that read history bring up to date from the journal.
 * Shared by `fluksio run` and the action's local mode, which differ only in how they show it.
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
  const recorder = await LocalRunRecorder.start({
    journalDir: state.journalDir,
    liveDir: state.liveDir,
    index: state.index,
    ...(options.teamCache ? { teamPoints: options.teamCache.pointsOf.bind(options.teamCache) } : {}),
    run: localRunRow({
      id: newId(),
      repository: LOCAL_REPOSITORY,
      pipelinePath: project.pipelinePath,
      groupId: options.groupId,
      groupIndex: options.groupIndex,
      stamp,
      noCache: options.noCache,
      selection: options.selection ?? null,
      startedAt: new Date(),
      branch: options.branch !== undefined ? options.branch : await currentBranch(project.workspace.repoRoot),
    }),
  });
  const { runId } = recorder;
  options.onStart?.({ id: runId, stamp });
  // Recorded while this process holds the run's lock: should it die, whoever finds the run
  // dead ends what its stages left running (end-dead-runs.ts).
  const stageGroups = new StageGroups(runStageGroupsDir(state.journalDir, runId));

  // A given ancestry is looked up while the stages run. The default one, the commit's
  // first parents, is asked of git only when the commit itself has no run to compare
  // with: a rerun at a commit already run here starts no git process for it.
  const givenAncestry = options.baselineCommits?.(stamp).catch((): string[] => []) ?? null;
  let outcome: RunOutcome;
  try {
    outcome = await runPipeline({
      runId,
      workspace: project.workspace,
      pipeline,
      params,
      codeIndex,
      interpreterDigests:
        options.interpreterDigests ??
        new InterpreterDigests(join(project.stateDir, 'interpreter-digests.json')),
      environment: options.environment,
      jobs: options.jobs,
      noCache: options.noCache,
      ...(options.selection ? { stages: options.selection.stages } : {}),
      ...(options.force ? { force: options.force } : {}),
      cache: state.cacheFor({ id: runId, pipelinePath: project.pipelinePath }),
      blobs: state.blobs,
      events: teeSinks(recorder.events, options.progress),
      ...(options.signal ? { signal: options.signal } : {}),
      launcher: stageGroups.track(options.launcher ?? directLauncher, runId),
      ...(options.gate ? { gate: options.gate } : {}),
      ...(options.probeLauncher ? { probeLauncher: options.probeLauncher } : {}),
      ...(options.fingerprintDir ? { fingerprintDir: options.fingerprintDir } : {}),
      ...(options.teamCache ? { teamCache: options.teamCache } : {}),
    });
  } catch (error) {
    await stageGroups.close();
    await recorder.finish({
      status: 'failed',
      reason: `fluksio failed: ${messageOf(error)}`,
      metrics: {},
      dirtyReasons: [],
      baselineRunId: null,
    });
    throw error;
  }
  await stageGroups.close();
  // Looked up before this run is recorded as one, so it is never its own baseline.
  const baseline = options.sweepBaseline
    ? options.sweepBaseline.run
    : await findLocalBaseline({ state, project, stamp, givenAncestry });
  await recorder.finish({
    status: outcome.status,
    reason: outcome.reason,
    metrics: outcome.metrics,
    dirtyReasons: outcome.dirtyReasons,
    baselineRunId: baseline?.id ?? null,
  });
  const detail = await recorder.detail();
  return { report: buildRunReport(detail, baseline, pipeline.metrics), detail, outcome, baseline };
}
