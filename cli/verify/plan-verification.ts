import { randomInt } from 'node:crypto';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { OutRecord } from '../../schemas/out-record.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { isStageSuccess } from '../../schemas/statuses.js';
import type { StageNotVerified } from '../../schemas/stage-verification.js';
import type { Run } from '../../schemas/tables/runs.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import type { ProjectStore } from '../../local/open-project-store.js';

/** Which stages to verify: every cached one, a random sample of them, or those named. */
export interface VerifySelection {
  /** Stage names given with `--stage`; empty for all. */
  stages: readonly string[];
  /** How many to pick at random among the candidates; null for all of them. */
  sample: number | null;
}

/** What `fluksio verify` re-executes, read from the store before the store is closed again. */
export interface VerificationPlan {
  run: Run & { commit: string };
  /** The entries to verify, by stage, in the run's stage order. */
  entries: { stage: string; entry: CacheEntry }[];
  notVerified: StageNotVerified[];
  /** Every out the run produced or restored, by normalized pipeline path. */
  produced: Map<string, OutRecord>;
}

/**
 * Reads what verifying a run needs: the run (refused with a UsageError when it has no
 * commit or ran on uncommitted changes — verify re-executes the committed tree), the
 * cache entry under each stage's key, and the outs upstream stages
 * left. Stages that were not cached or whose entry is gone are listed as not verified;
 * a `--stage` that cannot be verified is a UsageError saying why.
 */
export async function planVerification(
  store: ProjectStore,
  run: Run,
  selection: VerifySelection,
): Promise<VerificationPlan> {
  if (run.commit === null) {
    throw new UsageError(
      `Run ${run.id} was made before the repository's first commit; verify re-executes a commit`,
    );
  }
  if (run.dirty) {
    throw new UsageError(
      `Run ${run.id} ran on a work tree with uncommitted changes; verify re-executes the committed tree of ${run.commit.slice(0, 10)}, which is not what that run ran. Commit the changes, run again, and verify that run`,
    );
  }
  const detail = await getRunDetail({ db: store.state.db, runId: run.id });
  if (!detail) throw new UsageError(`Run ${run.id} has no record`);

  const produced = new Map<string, OutRecord>();
  for (const stage of detail.stages) {
    if (isStageSuccess(stage.status)) {
      for (const out of stage.outs) produced.set(normalizePipelinePath(out.path), out);
    }
  }

  const names = detail.stages.map((stage) => stage.name);
  const unknown = selection.stages.filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--stage: run ${run.id} has no stage ${unknown.map((name) => `"${name}"`).join(', ')} (it has: ${names.join(', ')})`,
    );
  }
  const candidates: { stage: string; entry: CacheEntry }[] = [];
  const notVerified: StageNotVerified[] = [];
  for (const stage of detail.stages) {
    if (selection.stages.length > 0 && !selection.stages.includes(stage.name)) continue;
    let why: string | null = null;
    if (!isStageSuccess(stage.status)) why = `it ${stage.status.replace('_', ' ')} in this run`;
    else if (stage.cacheKey === null) why = 'it is not cached (cache: false)';
    const entry = why === null ? await store.state.cacheFor(run).lookup(stage.cacheKey as string) : null;
    if (why === null && entry === null)
      why = 'the cache no longer holds an entry under its key (fluksio gc?)';
    if (entry) candidates.push({ stage: stage.name, entry });
    else notVerified.push({ stage: stage.name, why: why as string });
  }
  if (selection.stages.length > 0 && notVerified.length > 0) {
    throw new UsageError(
      notVerified.map(({ stage, why }) => `--stage ${stage}: cannot be verified: ${why}`).join('\n'),
    );
  }

  const chosen = pick(candidates.length, selection.sample);
  for (const [index, candidate] of candidates.entries()) {
    if (!chosen.has(index)) notVerified.push({ stage: candidate.stage, why: 'not in the sample' });
  }
  return {
    run: { ...run, commit: run.commit },
    entries: candidates.filter((_, index) => chosen.has(index)),
    notVerified,
    produced,
  };
}

/** `count` indices out of `total`, uniformly at random (Floyd's algorithm); all for null. */
function pick(total: number, count: number | null): Set<number> {
  if (count === null || count >= total) return new Set(Array.from({ length: total }, (_, index) => index));
  const chosen = new Set<number>();
  for (let j = total - count; j < total; j++) {
    const candidate = randomInt(j + 1);
    chosen.add(chosen.has(candidate) ? j : candidate);
  }
  return chosen;
}
