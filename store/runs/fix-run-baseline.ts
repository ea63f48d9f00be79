import { and, eq, sql } from 'drizzle-orm';
import { isFinalRunStatus } from '../../schemas/statuses.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { findBaseline } from './find-baseline.js';
import { recordBaselineCommits } from './record-baseline-commits.js';

/**
 * Fixes a finished run's baseline (DESIGN §7) once and for all: the clean success of its
 * pipeline at the nearest of the commits recorded on the run (its submitter's list, or the
 * GitHub App's lookup), preferring equal params, never a member of its own sweep. From then
 * on the run is shown against that run, never one made later.
 *
 * A run without recorded commits is looked for at its own commit, unless the GitHub App
 * made it (it has an installation): its commits come from the outbox's lookup, and until
 * they are recorded the run is left unfixed — unless `ownCommit` says the lookup was given
 * up. A sweep's members share one baseline, as a local sweep's do: a member of a sweep
 * with a fixed member takes that member's; the first member fixed chooses with the params
 * of the sweep's first point (its lowest group index), as the sweep comment does. A
 * member without recorded commits takes its sweep's, as the lookup would give the same.
 *
 * Works on the run as stored now (`run` names it). A run unfinished, fixed already or
 * still waiting for its commits is returned unchanged; otherwise the run as fixed.
 */
export async function fixRunBaseline({
  db,
  run: { id },
  ownCommit = false,
}: {
  db: Database;
  run: Pick<Run, 'id'>;
  /** The GitHub App's lookup was given up: an App-made run without commits uses its own commit. */
  ownCommit?: boolean;
}): Promise<Run | null> {
  return db.transaction(async (tx) => {
    const [run] = await tx.select().from(runs).where(eq(runs.id, id));
    if (!run || run.baselineFixed || !isFinalRunStatus(run.status)) return run ?? null;
    // Two members of one sweep finishing at once must not choose one each.
    if (run.groupId !== null)
      await tx.execute(
        sql`select pg_advisory_xact_lock(hashtextextended(${`sweep-baseline:${run.groupId}`}, 0))`,
      );
    const sweep = run.groupId === null ? [] : await sweepMembers(tx, run.groupId, run.repository);
    const fixedMember = sweep.find((member) => member.baselineFixed && member.id !== run.id);
    // The members share a commit (and a pull request's base): any member's lookup is the sweep's.
    const looked = sweep.find((member) => member.baselineCommits !== null);
    let baselineRunId: string | null;
    if (fixedMember) {
      baselineRunId = fixedMember.baselineRunId;
    } else {
      const commits =
        run.baselineCommits ??
        looked?.baselineCommits ??
        (run.installationId !== null && !ownCommit ? null : run.commit === null ? [] : [run.commit]);
      if (commits === null) return run;
      const baseline = await findBaseline({
        db: tx,
        repository: run.repository,
        pipelinePath: run.pipelinePath,
        commits,
        excludeRunId: run.id,
        excludeGroupId: run.groupId,
        paramsDigest: sweep[0]?.paramsDigest ?? run.paramsDigest,
      });
      baselineRunId = baseline?.id ?? null;
    }
    // So its check run names the merge-base as its sweep's do, without asking GitHub again.
    if (looked?.baselineCommits)
      await recordBaselineCommits({
        db: tx,
        runId: run.id,
        commits: looked.baselineCommits,
        mergeBase: looked.baselineMergeBase,
      });
    const [fixed] = await tx
      .update(runs)
      .set({ baselineRunId, baselineFixed: true })
      .where(and(eq(runs.id, run.id), eq(runs.baselineFixed, false)))
      .returning();
    return fixed ?? run;
  });
}

/** The members of a sweep of `repository`, its grid's first point first. */
function sweepMembers(db: Database, groupId: string, repository: string) {
  return db
    .select({
      id: runs.id,
      paramsDigest: runs.paramsDigest,
      baselineCommits: runs.baselineCommits,
      baselineMergeBase: runs.baselineMergeBase,
      baselineFixed: runs.baselineFixed,
      baselineRunId: runs.baselineRunId,
    })
    .from(runs)
    .where(and(eq(runs.groupId, groupId), eq(runs.repository, repository)))
    .orderBy(sql`${runs.groupIndex} asc nulls last`, runs.id);
}
