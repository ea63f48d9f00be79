import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizePipelinePath } from '../core/pipeline/pipeline-paths.js';
import { producerOf } from '../core/pipeline/stage-graph.js';
import { linkedStageGraph } from './workspace/real-stage-paths.js';
import type { OutRecord } from '../schemas/out-record.js';
import type { StagePlan } from '../schemas/stage-plan.js';
import { unrestorableOuts } from './blobs/unrestorable-outs.js';
import { findStageHit } from './find-stage-hit.js';
import { cacheKeyOf } from './keys/cache-key.js';
import { fingerprintOf } from './keys/fingerprint.js';
import { InterpreterDigests } from './keys/interpreter-digests.js';
import type { LauncherProbe } from './keys/launched-python.js';
import { startLauncherProbe } from './keys/start-launcher-probe.js';
import { pipelineReadSetProbe } from './keys/read-set-probe.js';
import { readStageMaterial } from './keys/read-stage-material.js';
import { missReasons } from './miss-reasons.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { makePrivateDir } from './sandbox/private-dir.js';
import { keyedEnvironment, stageEnvironment } from './sandbox/stage-environment.js';

/** What a plan reads: a run's inputs, without what executing needs (run id, events, jobs). */
export type PlanPipelineOptions = Pick<
  RunPipelineOptions,
  | 'workspace'
  | 'pipeline'
  | 'params'
  | 'codeIndex'
  | 'interpreterDigests'
  | 'environment'
  | 'noCache'
  | 'stages'
  | 'force'
  | 'cache'
  | 'blobs'
  | 'launcher'
>;

/** A dep digest no stage can have had: its producer has not run yet and no earlier record says what it made. */
const UNKNOWN_DIGEST = 'unknown: made by a stage that runs first';

/**
 * Says for each stage of a run (in the pipeline's order) whether `fluksio run` would run
 * it or restore it, and why, executing no stage: each key is computed as the run computes
 * it (the same material, the same read-set check against the files as they are now, the
 * same cache lookup, the blobs of a hit checked present) and a miss gets the run's reasons.
 * A stage after one that runs is keyed on what it read from that stage last time (the
 * `previous` record): a hit then is `depends`. Only the pipeline's `fingerprint` command
 * and Python launchers (asked which interpreter they start) are executed, since what they
 * say is in the keys. Writes nothing but a temporary folder.
 */
export async function planPipeline(options: PlanPipelineOptions): Promise<StagePlan[]> {
  // The home and temp folders of what it starts (the fingerprint, a Python launcher).
  const root = await mkdtemp(join(tmpdir(), 'fluksio-plan-'));
  const interpreterDigests = options.interpreterDigests ?? new InterpreterDigests(null);
  // Asked at once, while the fingerprint runs, as a run asks them.
  const launchers = startLauncherProbe({
    workspace: options.workspace,
    pipeline: options.pipeline,
    stages: options.stages ?? Object.keys(options.pipeline.stages),
    paramSets: [options.params],
    environment: options.environment,
    privateRoot: root,
    ...(options.launcher ? { launcher: options.launcher } : {}),
    digests: interpreterDigests,
  });
  try {
    return await planIn(root, { ...options, interpreterDigests }, launchers.probe);
  } finally {
    await launchers.close();
    await rm(root, { recursive: true, force: true }).catch(() => {});
  }
}

async function planIn(
  root: string,
  options: PlanPipelineOptions & { interpreterDigests: InterpreterDigests },
  probeLauncher: LauncherProbe,
): Promise<StagePlan[]> {
  const { pipeline, workspace } = options;
  const names = options.stages ?? Object.keys(pipeline.stages);
  const selected = new Set(names);
  const keyedEnv = keyedEnvironment(options.environment, pipeline.env);
  const environmentIn = async (name: string) =>
    stageEnvironment({
      source: options.environment,
      pass: pipeline.env,
      extra: {},
      privateDir: await makePrivateDir(root, name),
    });
  const fingerprint = pipeline.fingerprint
    ? await fingerprintOf(
        pipeline.fingerprint,
        workspace.pipelineDir,
        await environmentIn('.fingerprint'),
        options.launcher,
      )
    : null;
  const { interpreterDigests } = options;
  const probe = pipelineReadSetProbe(workspace, pipeline, options.codeIndex);
  const graph = await linkedStageGraph(pipeline, workspace);
  const produced = new Map<string, OutRecord>();
  const plans = new Map<string, Promise<StagePlan>>();

  const planStage = async (name: string): Promise<StagePlan> => {
    const stage = pipeline.stages[name];
    if (!stage) throw new Error(`No stage named ${name}`);
    const upstream = [...(graph.get(name) ?? [])].filter((each) => each !== name && selected.has(each));
    const upstreamPlans = await Promise.all(upstream.map(plan));
    const pending = new Set(
      upstreamPlans.filter((each) => each.action !== 'restore').map((each) => each.name),
    );
    const after = names.filter((each) => pending.has(each));
    const runs = (reasons: string[]): StagePlan => ({
      name,
      action: 'run',
      reasons,
      cachedFrom: null,
      after,
    });
    if (!stage.cache) return runs(['cache: false']);
    if (options.noCache) return runs(['--no-cache']);
    if (options.force?.has(name)) return runs(['--force']);

    const previous = pending.size > 0 ? await options.cache.previous(name).catch(() => null) : null;
    const assumed = new Map<string, string>();
    for (const dep of stage.deps.map(normalizePipelinePath)) {
      const producer = producerOf(pipeline, dep);
      if (producer && pending.has(producer))
        assumed.set(dep, previous?.keyInputs.deps[dep] ?? UNKNOWN_DIGEST);
    }
    const material = await readStageMaterial({
      workspace,
      pipeline,
      stage: name,
      params: options.params,
      codeIndex: options.codeIndex,
      env: keyedEnv,
      interpreterDigests,
      probeLauncher,
      fingerprint,
      produced,
      assumed,
    });
    const entry = (
      await findStageHit(options, {
        stage: name,
        traceable: material.traceable,
        cacheKey: cacheKeyOf(material.inputs),
        probe,
      })
    )?.entry;
    const unrestorable = entry ? await unrestorableOuts(options.blobs, entry) : null;
    if (!entry || unrestorable) {
      return runs(
        unrestorable
          ? [unrestorable]
          : await missReasons(name, { options, ranUpstream: pending, material, probe }),
      );
    }
    if (after.length > 0) {
      const paths = [...assumed.keys()].join(', ');
      return {
        name,
        action: 'depends',
        reasons: [
          `restored if ${after.join(', ')} ${after.length === 1 ? 'makes' : 'make'} ${paths} as before, else it runs`,
        ],
        cachedFrom: entry.runId,
        after,
      };
    }
    for (const out of entry.outs) produced.set(normalizePipelinePath(out.path), out);
    return { name, action: 'restore', reasons: [], cachedFrom: entry.runId, after };
  };
  const plan = (name: string): Promise<StagePlan> => {
    let found = plans.get(name);
    if (!found) {
      found = planStage(name);
      plans.set(name, found);
    }
    return found;
  };
  // One stage at a time, in the order a run with one job would key them: the interpreter
  // digests and the code index are shared.
  const result: StagePlan[] = [];
  for (const name of names) result.push(await plan(name));
  return result;
}
