import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Annotation } from '../schemas/annotation.js';
import type { KeyInputs } from '../schemas/key-inputs.js';
import type { OutRecord } from '../schemas/out-record.js';
import { normalizePipelinePath } from '../core/pipeline/pipeline-paths.js';
import { paramVariables } from '../core/pipeline/param-variables.js';
import { paramsFileText } from '../core/pipeline/params-file-text.js';
import { emptyStageRecord, type StageRecord } from '../schemas/stage-record.js';
import type { StageStatus } from '../schemas/statuses.js';
import { cacheKeyOf } from './keys/cache-key.js';
import type { CodeIndex } from './keys/code-index.js';
import { makePrivateDir } from './sandbox/private-dir.js';
import { findStageHit, restoreHit } from './find-stage-hit.js';
import { missReasons } from './miss-reasons.js';
import type { StageRecheck } from './keys/recheck-stage-inputs.js';
import { checkAfterRun } from './check-after-run.js';
import { readMetricsFile } from './output/metrics-file.js';
import { readPlotSeries } from './output/read-plot-series.js';
import { maskCodeManifest, maskMetricPoints, maskStageRecord } from './output/mask-stage-record.js';
import { MissingOutError } from './blobs/missing-out-error.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { removeOut, storeOut } from './blobs/stage-outputs.js';
import { keyingNotes } from './keys/keying-notes.js';
import { overlayDvcParamsFiles } from './dvc-params-overlay.js';
import { dvcOverlaidFiles } from './keys/dvc-overlaid-files.js';
import { keyOfExecution } from './keys/key-of-execution.js';
import { formatTimeLimit } from '../core/text/format-time-limit.js';
import { pipelineReadSetProbe } from './keys/read-set-probe.js';
import { startReadTrace } from './keys/read-trace.js';
import type { StageKeyMaterial } from './keys/stage-key-inputs.js';
import { readStageMaterial } from './keys/read-stage-material.js';
import { repoPathIn } from './workspace/workspace.js';
import { StageOutput } from './output/stage-output.js';
import { DEFAULT_LOG_LIMIT } from '../schemas/log-limit.js';
import { runStageProcess } from './sandbox/stage-process.js';
import type { StageResult, StageRunContext } from './stage-run-context.js';
import { StageJobStatus } from './stage-job-status.js';
import type { ParsedTraceback } from '../core/traceback.js';
import { stageResources } from '../schemas/resources.js';
import { localResourceSupport } from './sandbox/resource-support.js';
import { messageOf } from '../core/text/message-of.js';

/**
 * Takes one stage from its inputs to its record: computes its cache key, restores a
 * hit (verified; a missing or corrupt blob is a miss), or else says why it re-runs,
 * removes its outs, runs its command, checks and stores every out, reads its metrics
 * files and stores its log. Reports `stage.started` and `stage.finished` events; a
 * `ran` record carrying its key inputs is what the stage cache is written from.
 */
export async function executeStage(name: string, context: StageRunContext): Promise<StageResult> {
  const { options } = context;
  const stage = options.pipeline.stages[name];
  if (!stage) throw new Error(`No stage named ${name}`);
  const startedAt = new Date();
  // In a resumed attempt the stage may have started before the restart: its earlier lines go.
  options.events.emit({
    type: 'stage.started',
    stage: name,
    at: startedAt.toISOString(),
    ...(options.resumedAttempt ? { reattached: true } : {}),
  });
  const finish = (fields: Partial<StageRecord> & { status: StageStatus }): StageResult => {
    const finishedAt = new Date();
    // Its error, warnings, reasons and metric names quote the files the stage wrote or read: masked as its log is.
    const record = maskStageRecord(context.masker, {
      ...emptyStageRecord(name, fields.status),
      startedAt: startedAt.toISOString(),
      ...fields,
      warnings: [...resourceWarnings, ...(fields.warnings ?? [])],
      finishedAt: finishedAt.toISOString(),
      durationMs: finishedAt.getTime() - startedAt.getTime(),
    });
    options.events.emit({ type: 'stage.finished', stage: record });
    // What changed in the run's code names the files the stage created (`<secret>.py added`).
    const runDirty = (recheck?.runDirty ?? []).map((reason) => context.masker.mask(reason));
    return { record, annotations, tracebacks, runDirty };
  };
  const resourceWarnings: string[] = [];
  const annotations: Annotation[] = [];
  let tracebacks: ParsedTraceback[] = [];
  let recheck: StageRecheck | null = null;

  let material: StageKeyMaterial;
  let codeIndex: CodeIndex;
  try {
    // The code as it is now, not as it was when the run started: an earlier stage ran since.
    codeIndex = await context.codeView.fresh();
    material = await readStageMaterial({
      workspace: options.workspace,
      pipeline: options.pipeline,
      stage: name,
      params: options.params,
      codeIndex,
      env: context.keyedEnv,
      interpreterDigests: context.interpreterDigests,
      probeLauncher: context.probeLauncher,
      fingerprint: context.fingerprint,
      produced: context.produced,
    });
  } catch (error) {
    return finish({ status: 'failed', error: `Could not read the stage's inputs: ${messageOf(error)}` });
  }
  const cacheKey = stage.cache ? cacheKeyOf(material.inputs) : null;
  const keyed = { cacheKey, keyInputs: stage.cache ? material.inputs : null };
  const settle = async (): Promise<StageResult> => {
    const { workspace } = options;
    // The code as this stage starts, like its key: an earlier stage may have changed a file
    // an entry's read set holds since the run began (the run's first index would still vouch for it).
    const probe = pipelineReadSetProbe(workspace, options.pipeline, codeIndex);
    const notesOf = (inputs: KeyInputs | null) =>
      keyingNotes(name, inputs, {
        pipelineDirInRepo: workspace.pipelineDirInRepo,
        codeGlobs: (stage.code ?? options.pipeline.code ?? null) !== null,
      });

    let reasons: string[];
    if (!stage.cache) reasons = ['cache: false'];
    else if (options.noCache) reasons = ['--no-cache'];
    else if (options.force?.has(name)) reasons = ['--force'];
    else {
      // A Python command's entries are found by read set; its exact key still finds what an
      // execution that could not be traced stored.
      const hit = await findStageHit(options, {
        stage: name,
        traceable: material.traceable,
        cacheKey: cacheKey as string,
        probe,
      });
      const failure = hit ? await restoreHit(options, hit) : null;
      if (hit && failure === null) {
        const { entry } = hit;
        for (const out of entry.outs) context.produced.set(normalizePipelinePath(out.path), out);
        return finish({
          status: 'cached',
          ...keyed,
          cacheKey: entry.key,
          keyInputs: entry.keyInputs,
          cachedFrom: entry.runId,
          cachedFromTeam: hit.team,
          outs: entry.outs,
          metrics: entry.metrics,
          notes: notesOf(entry.keyInputs),
        });
      }
      reasons = failure
        ? [failure]
        : await missReasons(name, {
            options,
            ranUpstream: context.ranUpstream,
            material,
            probe,
          });
    }
    if (context.signal.aborted) return finish({ status: abortStatus(context.signal), ...keyed, reasons });

    const declared = [...stage.outs, ...stage.metrics];
    const resources = stageResources(options.pipeline.resources, stage.resources);
    const logLimit = stage.log_limit ?? options.pipeline.log_limit ?? DEFAULT_LOG_LIMIT;
    const launched = {
      name,
      jobKey: cacheKey ?? `${options.runId}.${name}`,
      resources,
      runId: options.runId,
      logLimit,
      ...(options.resumedAttempt ? { resumed: true } : {}),
    };
    // A job submitted before its runner was restarted still runs, writing these.
    const reattaching = options.launcher?.reattaches?.(launched) ?? false;
    // Its output is read again from the start: what the stage reported before is replaced.
    if (reattaching) {
      options.events.emit({
        type: 'stage.started',
        stage: name,
        at: startedAt.toISOString(),
        reattached: true,
      });
    }
    try {
      for (const path of declared) {
        if (!reattaching) await removeOut(workspace.pipelineDir, workspace.repoRoot, path);
        await mkdir(dirname(`${workspace.pipelineDir}/${normalizePipelinePath(path)}`), { recursive: true });
      }
    } catch (error) {
      return finish({ status: 'failed', ...keyed, reasons, error: messageOf(error) });
    }

    const output = new StageOutput({
      stage: name,
      masker: context.masker,
      cwd: workspace.pipelineDir,
      repoRoot: workspace.repoRoot,
      maxLogBytes: logLimit,
      onLog: (line) => options.events.emit({ type: 'stage.log', stage: name, lines: [line] }),
      onMetric: (point) => options.events.emit({ type: 'metric.points', points: [point] }),
      onAnnotation: (annotation) => {
        annotations.push(annotation);
        options.events.emit({ type: 'annotation', annotation });
      },
    });
    // Only a result that may be stored needs to know what it read.
    const trace =
      stage.cache && material.traceable
        ? await startReadTrace({
            repoRoot: workspace.repoRoot,
            pythonPath: context.keyedEnv.PYTHONPATH ?? undefined,
          }).catch(() => null)
        : null;
    if (!options.launcher?.honoursResources) {
      const support = localResourceSupport(name, resources);
      if (support.refusal) {
        await trace?.dispose();
        return finish({ status: 'failed', ...keyed, reasons, error: support.refusal });
      }
      if (support.warning) resourceWarnings.push(support.warning);
    }
    const since = Date.now();
    let processResult;
    const paramsWarnings: string[] = [];
    const jobStatus = new StageJobStatus(name, options.events);
    const processEnded = context.codeView.processStarted();
    try {
      const privateDir = await makePrivateDir(context.privateRoot, name);
      const paramsFile = await writeParamsFile(
        options.pipeline.params_file,
        privateDir,
        stage.params,
        options.params,
      );
      const restoreParams = await overlayDvcParamsFiles(
        options.pipeline,
        name,
        workspace,
        options.params,
        context.dvcParamsLock,
      ).catch(async (error: unknown) => {
        await rm(privateDir, { recursive: true, force: true }).catch(() => {});
        throw error;
      });
      processResult = await runStageProcess({
        cmd: material.inputs.cmd,
        cwd: workspace.pipelineDir,
        env: context.environmentFor(privateDir, {
          ...paramVariables(stage.params, options.params),
          ...(paramsFile ? { FLUKSIO_PARAMS_FILE: paramsFile } : {}),
          FLUKSIO_STAGE: name,
          ...trace?.env,
        }),
        timeoutMs: stage.timeout ?? null,
        signal: context.signal,
        ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
        ...(options.launcher ? { launcher: options.launcher } : {}),
        ...(trace ? { writable: [trace.dir] } : {}),
        stage: launched,
        onLine: (stream, line, continues) => output.push(stream, line, continues),
        onJobStatus: (status) => jobStatus.take(status),
      }).finally(() =>
        Promise.all([
          restoreParams().then((warnings) => paramsWarnings.push(...warnings)),
          rm(privateDir, { recursive: true, force: true }).catch(() => {}),
        ]),
      );
    } catch (error) {
      await trace?.dispose();
      return finish({ status: 'failed', ...keyed, reasons, error: messageOf(error) });
    } finally {
      options.launcher?.ended?.();
      processEnded();
    }
    const traced = trace ? await trace.collect().catch(() => null) : null;
    await trace?.dispose();
    const finished = output.finish();
    tracebacks = finished.tracebacks;
    const logDigest = await options.blobs
      .putBytes(Buffer.from(output.fullLog()))
      .then((blob) => blob.digest)
      .catch(() => null);
    const usage = (await options.launcher?.usage?.(launched, context.signal).catch(() => null)) ?? null;
    const ran = {
      ...keyed,
      reasons,
      exitCode: processResult.exitCode,
      logTail: finished.tail,
      logDigest,
      usage,
    };

    if (processResult.cancelled || processResult.timedOut) {
      const status: StageStatus = processResult.timedOut ? 'timed_out' : abortStatus(context.signal);
      const error =
        status === 'timed_out'
          ? processResult.timedOut
            ? `timed out after ${formatTimeLimit(stage.timeout ?? 0)}`
            : 'the run timed out'
          : 'cancelled';
      return finish({ status, ...ran, error });
    }
    if (processResult.exitCode !== 0) {
      const how =
        processResult.exitCode === null
          ? `was killed by ${processResult.signal}`
          : (options.launcher?.explainExit?.(jobStatus) ?? `exited with code ${processResult.exitCode}`);
      if (processResult.exitCode !== null && options.launcher?.givesBack?.(jobStatus)) {
        context.giveBack(`Stage ${name}: ${how}`);
        return finish({ status: 'failed', ...ran, error: how });
      }
      const last = tracebacks.at(-1)?.message ?? commandNotFound(processResult.exitCode, finished.tail);
      return finish({ status: 'failed', ...ran, error: last ? `${how}: ${last}` : how });
    }

    const outs: OutRecord[] = [];
    const metrics: Record<string, number> = output.metricFinals();
    const metricsWarnings: string[] = [];
    try {
      for (const path of declared) {
        outs.push(await storeOut(options.blobs, workspace.pipelineDir, workspace.repoRoot, path));
      }
      const goals = new Set(Object.keys(options.pipeline.metrics));
      for (const path of stage.metrics) {
        const file = await readMetricsFile(
          `${workspace.pipelineDir}/${normalizePipelinePath(path)}`,
          path,
          goals,
        );
        Object.assign(metrics, file.metrics);
        metricsWarnings.push(...file.warnings);
      }
    } catch (error) {
      const message =
        error instanceof MissingOutError
          ? `exited 0 but did not write its out "${error.path}"`
          : `could not store its outputs: ${messageOf(error)}`;
      return finish({ status: 'failed', ...ran, error: message });
    }
    // Plot files give series as `::metric` lines do (no final values); an unreadable one is a warning.
    const plotted = await readPlotSeries(stage.plots ?? [], workspace, name);
    const plottedPoints = maskMetricPoints(context.masker, plotted.points);
    for (let at = 0; at < plottedPoints.length; at += 1000) {
      options.events.emit({ type: 'metric.points', points: plottedPoints.slice(at, at + 1000) });
    }
    const decided = await keyOfExecution({
      stage: name,
      material,
      traced: material.traceable && stage.cache ? (traced ?? false) : null,
      probe,
      exclude: [...stage.deps, ...declared].map((path) => repoPathIn(workspace, path)),
      since: { stage: since, run: context.runStartedAt },
      cacheKey: ran.cacheKey,
      putBack: paramsPutBack(options, paramsWarnings),
    });
    let keyInputs = stage.cache ? decided.keyInputs : null;
    if (keyInputs?.code && material.code) {
      const manifest = await options.blobs
        // It names every code file, one the stage created after a secret among them.
        .putBytes(Buffer.from(JSON.stringify(maskCodeManifest(context.masker, material.code.entries))))
        .then((blob) => blob.digest)
        .catch(() => null);
      keyInputs = { ...keyInputs, code: { ...keyInputs.code, manifest } };
    }
    recheck = await checkAfterRun(name, context, material, codeIndex);
    for (const out of outs) context.produced.set(normalizePipelinePath(out.path), out);
    context.ranUpstream.add(name);
    return finish({
      status: 'ran',
      ...ran,
      cacheKey: stage.cache ? decided.cacheKey : null,
      keyInputs,
      outs,
      metrics,
      dirtyReasons: recheck.stageDirty,
      warnings: [...paramsWarnings, ...metricsWarnings, ...plotted.warnings, ...recheck.warnings],
      notes: [...notesOf(keyInputs), ...decided.notes],
    });
  };
  // Members of a local sweep running at once share a stage of the same key: one executes
  // it, the others wait until its cache entry is recorded and restore it.
  const gate =
    stage.cache && !options.noCache && !options.force?.has(name) && cacheKey !== null
      ? options.gate
      : undefined;
  if (!gate) return settle();
  return gate.exclusive(cacheKey as string, async () => {
    const result = await settle();
    await options.events.flush().catch(() => {});
    return result;
  });
}

/**
 * The DVC params files fluksio may have rewritten and put back byte for byte during this
 * run (repository paths) that the code index holds: their content is checked against the
 * id they had when the run began, which shows any edit since. An ignored params file keeps
 * the stamp check (its digest is taken after the stage), and so does every file when one
 * could not be put back (edited while the stage ran).
 */
function paramsPutBack(options: RunPipelineOptions, warnings: readonly string[]): Set<string> {
  if (warnings.length > 0) return new Set();
  const { workspace, pipeline } = options;
  return new Set(
    [...dvcOverlaidFiles(pipeline)]
      .map((file) => repoPathIn(workspace, file))
      .filter((file) => options.codeIndex.files.has(file)),
  );
}

/**
 * The pipeline's `params_file` for one stage, in its private folder (never in the work
 * tree: nothing to commit or ignore, gone with the stage); its path, or null without one.
 */
async function writeParamsFile(
  fileName: string | undefined,
  privateDir: string,
  listed: readonly string[],
  values: RunPipelineOptions['params'],
): Promise<string | null> {
  if (fileName === undefined) return null;
  const path = join(privateDir, fileName);
  await writeFile(path, paramsFileText(fileName, listed, values));
  return path;
}

function abortStatus(signal: AbortSignal): StageStatus {
  return signal.reason === 'timed_out' ? 'timed_out' : 'cancelled';
}

/**
 * Exit 127 is the shell's "command not found": which program it could not find, from the
 * line `sh` (`/bin/sh: 1: pyhton3: not found`) or bash (`bash: line 1: x: command not
 * found`) printed, so the summary names the typo or the missing tool; else null.
 */
function commandNotFound(exitCode: number | null, tail: string): string | null {
  if (exitCode !== 127) return null;
  const lines = [...tail.matchAll(/^\S*sh: (?:line )?\d+: (.+?): (?:command )?not found\s*$/gm)];
  const program = lines.at(-1)?.[1];
  return program === undefined
    ? null
    : `the shell found no command "${program}" (misspelt, or not installed on the PATH fluksio ran it with)`;
}
