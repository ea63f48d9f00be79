import { currentBranch } from '../runner/workspace/current-branch.js';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import pLimit from 'p-limit';
import { digestOf } from '../core/canonical-json.js';
import type { Params } from '../core/params/resolve-params.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { StageSelection } from '../schemas/stage-selection.js';
import type { Stamp } from '../schemas/stamp.js';
import { readCodeIndex, type CodeIndex } from '../runner/keys/code-index.js';
import { InterpreterDigests } from '../runner/keys/interpreter-digests.js';
import { KeyedStageGate } from '../runner/keyed-stage-gate.js';
import type { EventSink } from '../runner/ports.js';
import type { StageLauncher } from '../runner/sandbox/stage-launcher.js';
import { checkoutWorkTreeCopy, type WorkTreeCopy } from '../runner/workspace/checkout-work-tree-copy.js';
import { executeLocalRun, type LocalRunResult } from './execute-local-run.js';
import { findLocalBaseline } from './find-local-baseline.js';
import type { LocalState } from './local-state.js';
import type { LocalProject } from './locate-project.js';
import type { LocalTeamCache } from './local-team-cache.js';

export interface ParallelSweepOptions {
  project: LocalProject;
  pipeline: Pipeline;
  /** The sweep's parameter sets, in grid order (at least two). */
  grid: Params[];
  groupId: string;
  /** The user's work tree's code index, read after the store's lock was taken. */
  codeIndex: CodeIndex;
  state: LocalState;
  environment: Readonly<Record<string, string | undefined>>;
  /** Members executing at once. */
  members: number;
  /** Stages executing at once within each member. */
  jobs: number;
  noCache: boolean;
  /** The stages each member runs (`fluksio run train -j 2 lr=a,b`); null: every stage. */
  selection?: StageSelection | null;
  /** Stages each member re-runs even when cached (`--force`). */
  force?: ReadonlySet<string>;
  launcher?: StageLauncher;
  /** The team's cache every member asks when this store misses (`--remote-cache`). */
  teamCache?: LocalTeamCache;
  /** Cancels every member; members not started yet never start. */
  signal?: AbortSignal;
  /** Where member `index`'s engine events go besides the store. */
  progress(index: number): EventSink;
  /** A member is recorded and about to run its stages. */
  onStart?(index: number, run: { id: string; stamp: Stamp }): void;
  /** A member ended (in the order members end). */
  onEnd?(index: number, result: LocalRunResult): void;
}

/**
 * A local sweep with up to `members` runs executing at once (README "Sweeps in
 * parallel"). Each member but the last runs in a scratch copy of the work tree
 * (checkoutWorkTreeCopy: HEAD plus the uncommitted changes and the ignored deps the
 * pipeline declares) under `.fluksio/sweeps/<group>/`, removed when it ends; the last
 * member of the grid runs in the work tree itself, so its outputs are the ones left
 * there, as after a sweep run one member at a time. All record into the one store this
 * process holds (journals per run, content-addressed blobs, an index whose shared lists
 * are updated one at a time), and share a StageGate: a stage that several members compute
 * alike (`prepare`) executes once and the others restore it. Every member is compared with
 * the sweep's baseline, found before any member ran. Resolves with the results of the
 * members that ran, in grid order; a member that failed to record rejects, once every
 * member has ended.
 */
export async function runParallelSweep(options: ParallelSweepOptions): Promise<LocalRunResult[]> {
  const { project, pipeline, grid, state } = options;
  const commit = options.codeIndex.commit;
  // The work tree's branch: a member's copy is a detached checkout of the same commit.
  const branch = await currentBranch(project.workspace.repoRoot);
  const sweepBaseline = {
    run: await findLocalBaseline({
      state,
      project,
      stamp: { commit, paramsDigest: digestOf(grid[0] ?? {}) },
      givenAncestry: null,
    }),
  };
  const gate = new KeyedStageGate();
  const interpreterDigests = new InterpreterDigests(join(project.stateDir, 'interpreter-digests.json'));
  const scratchRoot = join(project.stateDir, 'sweeps', options.groupId);
  const copies = new Set<WorkTreeCopy>();
  // One `git worktree add` at a time: they name their records in .git/worktrees/ alike.
  const creating = pLimit(1);
  // A second Ctrl-C exits at once (cli/main.ts), without reaching the `finally` below.
  const removeOnExit = () => {
    for (const copy of copies) copy.checkout.removeNow();
    rmSync(scratchRoot, { recursive: true, force: true });
  };
  process.once('exit', removeOnExit);

  const last = grid.length - 1;
  const runMember = async (index: number, params: Params): Promise<LocalRunResult | null> => {
    if (options.signal?.aborted) return null;
    let copy: WorkTreeCopy | null = null;
    try {
      if (index !== last) {
        copy = await creating(() =>
          checkoutWorkTreeCopy({
            source: project.workspace,
            codeIndex: options.codeIndex,
            pipeline,
            under: scratchRoot,
          }),
        );
        copies.add(copy);
      }
      const workspace = copy?.workspace ?? project.workspace;
      const result = await executeLocalRun({
        project: { ...project, workspace },
        pipeline,
        params,
        // The work tree's member reads it again: members before it may have run long.
        codeIndex: await readCodeIndex(workspace.repoRoot),
        state,
        environment: options.environment,
        jobs: options.jobs,
        noCache: options.noCache,
        selection: options.selection ?? null,
        ...(options.force ? { force: options.force } : {}),
        ...(options.launcher ? { launcher: options.launcher } : {}),
        ...(options.teamCache ? { teamCache: options.teamCache } : {}),
        groupId: options.groupId,
        groupIndex: index,
        progress: options.progress(index),
        ...(options.signal ? { signal: options.signal } : {}),
        sweepBaseline,
        branch,
        interpreterDigests,
        gate,
        // The work tree's: it may read ignored files (a toolchain file) a copy lacks.
        fingerprintDir: project.workspace.pipelineDir,
        ...(options.onStart ? { onStart: (run) => options.onStart?.(index, run) } : {}),
      });
      options.onEnd?.(index, result);
      return result;
    } finally {
      if (copy) {
        copies.delete(copy);
        await copy.checkout.remove();
      }
    }
  };

  try {
    const limit = pLimit(Math.max(1, options.members));
    const settled = await Promise.allSettled(
      grid.map((params, index) => limit(() => runMember(index, params))),
    );
    const failure = settled.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    return settled.flatMap((outcome) =>
      outcome.status === 'fulfilled' && outcome.value ? [outcome.value] : [],
    );
  } finally {
    process.removeListener('exit', removeOnExit);
    await rm(scratchRoot, { recursive: true, force: true });
  }
}
