import { and, asc, desc, eq, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * The run a new run's metrics are compared against (DESIGN §7): a `succeeded` run of the
 * same pipeline at the first of `commits` (nearest first, e.g. a first-parent walk from
 * the merge-base) that has one, other than the run itself and never a dirty run or a run of some stages only. Among that commit's runs, one
 * with equal params wins, then the newest. Null when no listed commit has one.
 */
export async function findBaseline({
  db,
  repository,
  pipelinePath,
  commits,
  excludeRunId,
  excludeGroupId = null,
  paramsDigest,
}: {
  db: Database;
  repository: string;
  pipelinePath: string;
  commits: readonly string[];
  excludeRunId: string;
  /** A sweep's members are never each other's baseline: they share the sweep's. */
  excludeGroupId?: string | null;
  paramsDigest: string;
}): Promise<Run | null> {
  if (commits.length === 0) return null;
  const nearness = sql`array_position(array[${sql.join(
    commits.map((commit) => sql`${commit}`),
    sql`, `,
  )}]::text[], ${runs.commit})`;
  const [baseline] = await db
    .select()
    .from(runs)
    .where(
      and(
        eq(runs.repository, repository),
        eq(runs.pipelinePath, pipelinePath),
        inArray(runs.commit, [...commits]),
        eq(runs.status, 'succeeded'),
        // Uncommitted code is never another run's baseline, nor a run of some stages only.
        eq(runs.dirty, false),
        isNull(runs.selection),
        ne(runs.id, excludeRunId),
        excludeGroupId === null ? undefined : or(isNull(runs.groupId), ne(runs.groupId, excludeGroupId)),
      ),
    )
    .orderBy(
      asc(nearness),
      desc(sql`${runs.paramsDigest} = ${paramsDigest}`),
      desc(runs.createdAt),
      desc(runs.id),
    )
    .limit(1);
  return baseline ?? null;
}
