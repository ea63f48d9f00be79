import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { Annotation } from '../schemas/annotation.js';
import { linkedStageGraph } from './workspace/real-stage-paths.js';
import type { StageRecord } from '../schemas/stage-record.js';
import { isStageSuccess, type RunStatus } from '../schemas/statuses.js';
import { executeStage } from './execute-stage.js';
import { reuseFinishedStage } from './reuse-finished-stage.js';
import type { StageResult, StageRunContext } from './stage-run-context.js';
import { notStartedRecord } from './not-started-record.js';
import { fingerprintOf } from './keys/fingerprint.js';
import { startLauncherProbe, type StartedLauncherProbe } from './keys/start-launcher-probe.js';
import { Masker } from './output/masker.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { CodeView } from './keys/code-view.js';
import { InterpreterDigests } from './keys/interpreter-digests.js';
import { ignoreStateDir } from './ignore-state-dir.js';
import { makePrivateDir } from './sandbox/private-dir.js';
import { keyedEnvironment, stageEnvironment } from './sandbox/stage-environment.js';
import type { ParsedTraceback } from '../core/traceback.js';

export interface RunOutcome {
  status: Extract<RunStatus, 'succeeded' | 'failed' | 'cancelled' | 'timed_out'>;
  /** A sentence for a run that did not succeed. */
  reason: string | null;
  /** In the pipeline's order. */
  stages: StageRecord[];
  /** The run's metrics: each successful stage's, later stages winning on a clash. */
  metrics: Record<string, number>;
  annotations: Annotation[];
  tracebacks: { stage: string; traceback: ParsedTraceback }[];
  /**
   * What changed in the code while stages ran: the run executed more than one version of
   * it, so its stamp is dirty whatever it said when the run started.
   */
  dirtyReasons: string[];
  /**
   * Why the run should be tried again rather than finished (`Stage train: Slurm requeued
   * the job`), or null: a runner gives such a run back to the queue; a local run, which
   * nobody retries, fails with it.
   */
  giveBack: string | null;
}

/**
 * Executes a pipeline's stage graph once (DESIGN §1, §5): each stage waits for the
 * stages whose outputs it reads, independent stages run in parallel up to `jobs`, a
 * stage whose upstream failed is skipped, and cancellation or the pipeline's timeout
 * stops running stages and starts no new ones. Everything that happens is reported to
 * the event sink; the returned outcome is the same story, summed up.
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunOutcome> {
  const runStartedAt = Date.now();
  const { pipeline } = options;
  // Stages' homes, temporary folders and bytecode live here, and go with the run: inside
  // the workspace, which a sandbox keeps writable (its /tmp is its own), under a
  // `.fluksio/` that ignores itself, so git and the code digest never see them.
  const stateDir = join(options.workspace.pipelineDir, '.fluksio');
  await ignoreStateDir(stateDir);
  const privateRoot = await mkdtemp(join(stateDir, 'run-'));
  const abort = new AbortController();
  const cancel = () => abort.abort('cancelled');
  let giveBack: string | null = null;
  if (options.signal?.aborted) cancel();
  options.signal?.addEventListener('abort', cancel, { once: true });
  const timer = setTimeout(() => abort.abort('timed_out'), pipeline.timeout);

  const masker = new Masker();
  for (const secret of Object.values(options.secrets ?? {})) masker.add(secret);
  const stageExtra = { ...options.secrets, FLUKSIO_RUN_ID: options.runId };
  const environmentFor = (privateDir: string, extra: Record<string, string> = {}) =>
    stageEnvironment({
      source: options.environment,
      pass: pipeline.env,
      extra: { ...stageExtra, ...extra },
      privateDir,
    });
  const names = options.stages ?? Object.keys(pipeline.stages);
  const interpreterDigests = options.interpreterDigests ?? new InterpreterDigests(null);
  const keyedEnv = keyedEnvironment(options.environment, pipeline.env);
  // Python launchers are asked which interpreter they start at once, while the
  // fingerprint and the first keys are read: a shim's answer is slow to come. A caller
  // may have started asking earlier still, before it read the tree.
  const started: StartedLauncherProbe = options.probeLauncher
    ? { probe: options.probeLauncher, close: async () => {} }
    : startLauncherProbe({
        workspace: options.workspace,
        pipeline,
        stages: names,
        paramSets: [options.params],
        environment: options.environment,
        extra: stageExtra,
        privateRoot,
        ...(options.launcher ? { launcher: options.launcher } : {}),
        digests: interpreterDigests,
      });

  try {
    let fingerprint: string | null = null;
    try {
      if (pipeline.fingerprint) {
        const privateDir = await makePrivateDir(privateRoot, '.fingerprint');
        fingerprint = await fingerprintOf(
          pipeline.fingerprint,
          options.fingerprintDir ?? options.workspace.pipelineDir,
          environmentFor(privateDir),
          options.launcher,
        );
      }
    } catch (error) {
      const reason = masker.mask((error as Error).message);
      const stages = names.map((name) => notStartedRecord(name, 'skipped', reason));
      for (const stage of stages) options.events.emit({ type: 'stage.finished', stage });
      return {
        status: 'failed',
        reason,
        stages,
        metrics: {},
        annotations: [],
        tracebacks: [],
        dirtyReasons: [],
        giveBack: null,
      };
    }

    const context: StageRunContext = {
      options,
      fingerprint,
      keyedEnv,
      environmentFor,
      privateRoot,
      codeView: new CodeView(options.workspace.repoRoot, options.codeIndex),
      interpreterDigests,
      probeLauncher: started.probe,
      masker,
      signal: abort.signal,
      giveBack: (reason) => {
        giveBack ??= reason;
        abort.abort('given_back');
      },
      produced: new Map(),
      ranUpstream: new Set(),
      runStartedAt,
      dvcParamsLock: { tail: Promise.resolve() },
    };
    const finished = new Map((options.finished ?? []).map((record) => [record.name, record]));
    const graph = await linkedStageGraph(pipeline, options.workspace);
    const limit = pLimit(Math.max(1, options.jobs));
    const scheduled = new Map<string, Promise<StageResult>>();
    const schedule = (name: string): Promise<StageResult> => {
      const existing = scheduled.get(name);
      if (existing) return existing;
      const promise = (async () => {
        const done = finished.get(name);
        const reused = done ? await reuseFinishedStage(done, context) : null;
        if (reused) return reused;
        const upstream = await Promise.all([...(graph.get(name) ?? [])].map(schedule));
        const blocked = upstream.find((result) => !isStageSuccess(result.record.status));
        if (blocked) {
          return notRun(
            options,
            name,
            'skipped',
            `upstream stage ${blocked.record.name} ${describe(blocked.record)}`,
          );
        }
        return limit(() =>
          abort.signal.aborted
            ? notRun(
                options,
                name,
                abort.signal.reason === 'timed_out' ? 'timed_out' : 'cancelled',
                notStartedWhy(abort.signal),
              )
            : executeStage(name, context),
        );
      })();
      scheduled.set(name, promise);
      return promise;
    };
    const results = await Promise.all(names.map(schedule));
    return summarize(results, abort.signal, pipeline.timeout, giveBack);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', cancel);
    // A launcher no stage came to need (its stages were skipped) is not waited for.
    await started.close();
    await interpreterDigests.save();
    // A stage may leave read-only folders behind (some caches are): what cannot go stays in the temp dir.
    await rm(privateRoot, { recursive: true, force: true }).catch(() => {});
    await options.events.flush();
  }
}

function notRun(
  options: RunPipelineOptions,
  name: string,
  status: StageRecord['status'],
  why: string,
): StageResult {
  const record = notStartedRecord(name, status, why);
  options.events.emit({ type: 'stage.finished', stage: record });
  return { record, annotations: [], tracebacks: [], runDirty: [] };
}

function notStartedWhy(signal: AbortSignal): string {
  if (signal.reason === 'timed_out') return 'the run timed out before this stage started';
  if (signal.reason === 'given_back')
    return 'the run was given back for another attempt before this stage started';
  return 'cancelled before it started';
}

function describe(record: StageRecord): string {
  return record.status === 'timed_out' ? 'timed out' : record.status;
}

function summarize(
  results: StageResult[],
  signal: AbortSignal,
  timeoutMs: number,
  giveBack: string | null,
): RunOutcome {
  const stages = results.map((result) => result.record);
  const metrics: Record<string, number> = {};
  for (const stage of stages) if (isStageSuccess(stage.status)) Object.assign(metrics, stage.metrics);
  const annotations = results.flatMap((result) => result.annotations);
  const tracebacks = results.flatMap((result) =>
    result.tracebacks.map((traceback) => ({ stage: result.record.name, traceback })),
  );
  const dirtyReasons = [...new Set(results.flatMap((result) => result.runDirty))];
  const base = { stages, metrics, annotations, tracebacks, dirtyReasons, giveBack };
  if (giveBack !== null) return { status: 'failed', reason: giveBack, ...base };
  if (signal.reason === 'cancelled') return { status: 'cancelled', reason: 'The run was cancelled', ...base };
  if (signal.reason === 'timed_out') {
    return {
      status: 'timed_out',
      reason: `The run exceeded its timeout of ${timeoutMs / 60_000} min`,
      ...base,
    };
  }
  const timedOut = stages.find((stage) => stage.status === 'timed_out');
  if (timedOut)
    return {
      status: 'timed_out',
      reason: `Stage ${timedOut.name} ${timedOut.error ?? 'timed out'}`,
      ...base,
    };
  const failed = stages.find((stage) => stage.status === 'failed');
  if (failed)
    return { status: 'failed', reason: `Stage ${failed.name} failed: ${failed.error ?? 'failed'}`, ...base };
  return { status: 'succeeded', reason: null, ...base };
}
