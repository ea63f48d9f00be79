import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../core/new-id.js';
import type { BlobDigest } from '../schemas/blob-digest.js';
import type { CacheEntry } from '../schemas/cache-entry.js';
import { DirManifest, type OutRecord } from '../schemas/out-record.js';
import { normalizePipelinePath, pathContains } from '../core/pipeline/pipeline-paths.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { Params } from '../core/params/resolve-params.js';
import { producerOf } from '../core/pipeline/stage-graph.js';
import type { StageRecord } from '../schemas/stage-record.js';
import type { OutDifference, StageVerification, VerifyVerdict } from '../schemas/stage-verification.js';
import { BlobCorruptError, BlobMissingError } from './blobs/blob-errors.js';
import { describeCodeChanges } from './keys/code-digest.js';
import type { CodeIndex } from './keys/code-index.js';
import { CodeView } from './keys/code-view.js';
import {
  compareWithEntry,
  differingFiles,
  metricDifferences,
  outDifferences,
} from './keys/compare-with-entry.js';
import { executeStage } from './execute-stage.js';
import type { StageRunContext } from './stage-run-context.js';
import { InterpreterDigests } from './keys/interpreter-digests.js';
import { makeLauncherProbe } from './keys/launched-python.js';
import { makePrivateDir } from './sandbox/private-dir.js';
import { Masker } from './output/masker.js';
import type { BlobStore, EventSink, StageCache } from './ports.js';
import { keyedEnvironment, stageEnvironment } from './sandbox/stage-environment.js';
import { restoreOut } from './blobs/stage-outputs.js';
import { UnsafePathError } from './workspace/unsafe-path-error.js';
import { repoPathIn, type Workspace } from './workspace/workspace.js';
import { resolveWorkspacePath } from './workspace/workspace-path.js';

export interface VerifyStageOptions {
  stage: string;
  /** The cache entry the run used for this stage: what is verified. */
  entry: CacheEntry;
  /** A scratch work tree at the run's commit, as checked out. */
  workspace: Workspace;
  /** Puts the scratch work tree back to the commit (between two executions). */
  resetWorkspace(): Promise<void>;
  /** Where the run was made: deps the commit does not hold (ignored files) are copied from here. */
  sourceWorkspace: Workspace;
  /** The pipeline as the commit has it. */
  pipeline: Pipeline;
  /** The run's parameters. */
  params: Params;
  /** The scratch work tree's code index, read once it was checked out. */
  codeIndex: CodeIndex;
  /** Every out the run produced or restored, by normalized pipeline path: upstream outs come from here. */
  produced: ReadonlyMap<string, OutRecord>;
  /** Reads the project's blobs; what the re-executions store must not go into the project's store. */
  blobs: BlobStore;
  /** The environment stages' basics come from (the pipeline's `env` values come from the entry). */
  environment: Readonly<Record<string, string | undefined>>;
  /** The fingerprint output's digest on this machine, as a run here would key it. */
  fingerprint: string | null;
  /** Where the re-executions' events go (a terminal's progress). */
  events: EventSink;
  signal: AbortSignal;
}

/** A cache that answers nothing: re-executions never restore, they always run. */
const NO_CACHE: StageCache = {
  lookup: async () => null,
  candidates: async () => [],
  previous: async () => null,
};

/**
 * Re-executes one cached stage in a scratch work tree on the inputs its cache entry was
 * made from — its upstream outs restored from the store (verified by digest), the
 * pipeline's `env` values the entry claims — through the engine's own executeStage, and
 * judges the entry (see VerifyVerdict). The key inputs recomputed by that execution are
 * compared with the entry's claims; when they agree but the bytes differ, the stage runs
 * a second time, in a later wall-clock second, to tell a stage that varies
 * (nondeterministic) from a cache that holds bytes a fresh run reproducibly does not make
 * (stale).
 */
export async function verifyStage(options: VerifyStageOptions): Promise<StageVerification> {
  const started = Date.now();
  const { entry, stage } = options;
  const result = (verdict: VerifyVerdict, fields: Partial<StageVerification>): StageVerification => ({
    stage,
    verdict,
    cacheKey: entry.key,
    entryRun: entry.runId,
    findings: [],
    outs: [],
    metrics: [],
    executions: 0,
    ...fields,
    durationMs: Date.now() - started,
  });

  if (options.fingerprint !== entry.keyInputs.fingerprint) {
    return result('unverifiable', {
      findings: [
        "this machine's fingerprint output differs from the entry's: verify where the entry was made",
      ],
    });
  }
  const prepared = await prepareInputs(options);
  if (prepared.problem) return result('unverifiable', { findings: [prepared.problem] });
  const notes = prepared.notes;

  const first = await execute(options);
  if (first.status !== 'ran') {
    return result('unverifiable', {
      executions: 1,
      findings: [...notes, `the re-execution ${first.status}: ${first.error ?? 'no reason given'}`],
    });
  }
  const comparison = compareWithEntry(entry, first, {
    producerOf: (dep) => producerOf(options.pipeline, dep),
    codeChanges: await codeChanges(options, entry, first),
  });
  const outs = await withDirectoryFiles(options.blobs, entry.outs, comparison.outs);
  // A dep the commit lacks was copied from the work tree; if it changed since, the entry
  // is not wrong, it just cannot be checked here.
  const changedCopies = prepared.copied.filter(
    (dep) => first.keyInputs?.deps[dep] !== entry.keyInputs.deps[dep],
  );
  if (changedCopies.length > 0) {
    return result('unverifiable', {
      executions: 1,
      findings: changedCopies.map(
        (dep) =>
          `${dep} is not in the commit, and the work tree's copy differs from the one the entry was made from`,
      ),
      outs,
      metrics: comparison.metrics,
    });
  }
  if (comparison.keyDifferences.length > 0) {
    return result('stale', {
      executions: 1,
      findings: [
        ...notes,
        ...comparison.keyDifferences.map((difference) => `key input differs from the entry's: ${difference}`),
      ],
      outs,
      metrics: comparison.metrics,
    });
  }
  if (outs.length === 0 && comparison.metrics.length === 0) {
    return result('deterministic', { executions: 1, findings: notes });
  }

  // A stage that writes the time to the second would write the same bytes twice within
  // one second and look reproducible: the second execution starts in a second later than
  // the first one ended. (Not later than it started: on a loaded machine a stage recorded
  // as started at x.95 s may only print the time at x+1.05 s, as the second would.)
  const wait = 1000 - (Date.now() % 1000);
  await sleep(wait, undefined, { signal: options.signal }).catch(() => {});
  await options.resetWorkspace();
  const again = await prepareInputs(options);
  const second = again.problem ? null : await execute(options);
  if (second === null || second.status !== 'ran') {
    const why = second ? `${second.status}: ${second.error ?? 'no reason given'}` : again.problem;
    return result(second?.status === 'cancelled' ? 'unverifiable' : 'nondeterministic', {
      executions: 2,
      findings: [...notes, `a second execution ${why ?? 'did not run'}`],
      outs,
      metrics: comparison.metrics,
    });
  }
  const secondDigests = new Map(second.outs.map((out) => [out.path, out.digest]));
  const withAgain = outs.map((out) => ({ ...out, again: secondDigests.get(out.path) ?? null }));
  const reproducible =
    outDifferences(first.outs, second.outs).length === 0 &&
    metricDifferences(first.metrics, second.metrics).length === 0;
  if (reproducible) {
    return result('stale', {
      executions: 2,
      findings: [
        ...notes,
        'two fresh executions made the same bytes, other than those the cache holds: the entry was made from an input its key does not cover (a file outside its code scope, an environment variable, a service, the date), or it was altered',
      ],
      outs: withAgain,
      metrics: comparison.metrics,
    });
  }
  return result('nondeterministic', {
    executions: 2,
    findings: notes,
    outs: withAgain,
    metrics: comparison.metrics,
  });
}

interface PreparedInputs {
  /** Sentences for the report (a dep copied from the work tree). */
  notes: string[];
  /** Deps copied from the work tree, by normalized pipeline path. */
  copied: string[];
  /** What makes the stage unverifiable, if anything. */
  problem?: string;
}

/**
 * Puts the stage's deps in place in the scratch work tree: upstream outs restored from
 * the store by the digests the run used, and deps the commit does not hold (ignored
 * data) copied from the work tree the run was made in. Returns notes for the report, or
 * the problem that makes the stage unverifiable.
 */
async function prepareInputs(options: VerifyStageOptions): Promise<PreparedInputs> {
  const stage = options.pipeline.stages[options.stage];
  if (!stage) {
    return { notes: [], copied: [], problem: `the pipeline at this commit has no stage ${options.stage}` };
  }
  const { workspace, sourceWorkspace } = options;
  const notes: string[] = [];
  const copied: string[] = [];
  for (const dep of stage.deps) {
    const depPath = normalizePipelinePath(dep);
    // A dep may be an out, lie inside a directory out, or hold outs: each is restored.
    const upstream = [...options.produced].filter(
      ([outPath]) => pathContains(outPath, depPath) || pathContains(depPath, outPath),
    );
    for (const [, out] of upstream) {
      try {
        await restoreOut(options.blobs, workspace.pipelineDir, workspace.repoRoot, out);
      } catch (error) {
        if (!(error instanceof BlobMissingError || error instanceof BlobCorruptError)) throw error;
        const what = error instanceof BlobMissingError ? 'is missing' : 'is corrupt';
        return {
          notes,
          copied,
          problem: `upstream out ${out.path} could not be restored: blob ${error.digest} ${what}`,
        };
      }
    }
    if (upstream.length > 0) continue;
    // Checked like any read or write of the workspace: no symlink may lead either copy outside.
    let inScratch: string;
    let inSource: string;
    try {
      const repoPath = repoPathIn(workspace, depPath);
      inScratch = await resolveWorkspacePath(workspace.repoRoot, repoPath);
      inSource = await resolveWorkspacePath(sourceWorkspace.repoRoot, repoPath);
    } catch (error) {
      if (!(error instanceof UnsafePathError)) throw error;
      return { notes, copied, problem: `dep ${dep}: ${error.message}` };
    }
    if (!existsSync(inScratch) && existsSync(inSource)) {
      await cp(inSource, inScratch, { recursive: true, dereference: true });
      notes.push(`${dep} is not in the commit: copied from the work tree`);
      copied.push(depPath);
    }
  }
  return { notes, copied };
}

/** One execution of the stage through the engine, its outputs stored in `options.blobs`. */
async function execute(options: VerifyStageOptions): Promise<StageRecord> {
  const { pipeline, entry } = options;
  // The pipeline's `env` values the entry was made with, so the stage sees what it saw then.
  const claimed = Object.fromEntries(pipeline.env.map((name) => [name, entry.keyInputs.env[name] ?? null]));
  const source: Record<string, string | undefined> = { ...options.environment };
  for (const [name, value] of Object.entries(claimed)) source[name] = value ?? undefined;
  const runId = newId();
  const privateRoot = await mkdtemp(path.join(tmpdir(), 'fluksio-verify-run-'));
  const environmentFor = (privateDir: string, extra: Record<string, string> = {}) =>
    stageEnvironment({ source, pass: pipeline.env, extra: { FLUKSIO_RUN_ID: runId, ...extra }, privateDir });
  const context: StageRunContext = {
    options: {
      runId,
      workspace: options.workspace,
      pipeline,
      params: options.params,
      codeIndex: options.codeIndex,
      environment: source,
      jobs: 1,
      noCache: true,
      cache: NO_CACHE,
      blobs: options.blobs,
      events: options.events,
      signal: options.signal,
    },
    fingerprint: options.fingerprint,
    keyedEnv: keyedEnvironment(source, pipeline.env),
    environmentFor,
    privateRoot,
    codeView: new CodeView(options.workspace.repoRoot, options.codeIndex),
    interpreterDigests: new InterpreterDigests(null),
    probeLauncher: makeLauncherProbe({
      environment: async () => environmentFor(await makePrivateDir(privateRoot, '.launcher')),
    }),
    masker: new Masker(),
    signal: options.signal,
    // A verification executes here, with no launcher that ends stages for a retry.
    giveBack: () => {},
    produced: new Map(options.produced),
    ranUpstream: new Set(),
    runStartedAt: Date.now(),
    dvcParamsLock: { tail: Promise.resolve() },
  };
  try {
    return (await executeStage(options.stage, context)).record;
  } finally {
    await rm(privateRoot, { recursive: true, force: true }).catch(() => {});
  }
}

/** The code files that differ between the entry's code manifest and the fresh one, when both can be read. */
async function codeChanges(
  options: VerifyStageOptions,
  entry: CacheEntry,
  fresh: StageRecord,
): Promise<string[] | null> {
  const before = entry.keyInputs.code;
  const after = fresh.keyInputs?.code;
  if (!before?.manifest || !after?.manifest || before.digest === after.digest) return null;
  try {
    const relative = async (digest: BlobDigest) =>
      (JSON.parse((await options.blobs.getBytes(digest)).toString()) as [string, string][]).map(
        ([repoPath, id]): [string, string] => [
          path.posix.relative(options.workspace.pipelineDirInRepo || '.', repoPath) || repoPath,
          id,
        ],
      );
    return describeCodeChanges(await relative(before.manifest), await relative(after.manifest));
  } catch {
    return null;
  }
}

/** Names the files that differ inside directory outs, when both manifests can be read. */
async function withDirectoryFiles(
  blobs: BlobStore,
  cachedOuts: readonly OutRecord[],
  differences: OutDifference[],
): Promise<OutDifference[]> {
  const kinds = new Map(cachedOuts.map((out) => [out.path, out.kind]));
  return Promise.all(
    differences.map(async (difference) => {
      if (kinds.get(difference.path) !== 'dir' || difference.fresh === null) return difference;
      try {
        const read = async (digest: string) =>
          DirManifest.parse(JSON.parse((await blobs.getBytes(digest)).toString('utf8')));
        return {
          ...difference,
          files: differingFiles(await read(difference.cached), await read(difference.fresh)),
        };
      } catch {
        return difference;
      }
    }),
  );
}
