import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { RunStatus } from '../../schemas/statuses.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { escapeLike } from '../db/escape-like.js';

/**
 * The newest `limit` runs of `repositories` (the ones an API token reaches), optionally
 * only those of one pipeline file (`pipelinePath`), those whose id starts with `prefix` (any case: ULIDs are upper case, people type
 * lower), those at one of `commits`, of `branch` or in `status` — `GET /api/v1/runs`, for
 * `fluksio runs --remote`, for resolving the short ids fluksio prints and the runs a git
 * revision stands for (`fluksio diff --remote main`). Runs of other repositories are never matched, so a prefix tells a
 * token nothing about runs it may not see.
 */
export async function listVisibleRuns({
  db,
  repositories,
  pipelinePath,
  prefix,
  commits,
  branch,
  status,
  limit,
}: {
  db: Database;
  repositories: readonly string[];
  pipelinePath?: string | undefined;
  prefix?: string | undefined;
  commits?: readonly string[] | undefined;
  branch?: string | undefined;
  status?: RunStatus | undefined;
  limit: number;
}): Promise<Run[]> {
  if (repositories.length === 0) return [];
  return db
    .select()
    .from(runs)
    .where(
      and(
        inArray(runs.repository, [...repositories]),
        pipelinePath === undefined ? undefined : eq(runs.pipelinePath, pipelinePath),
        prefix ? sql`upper(${runs.id}) like ${`${escapeLike(prefix.toUpperCase())}%`}` : undefined,
        commits === undefined ? undefined : inArray(runs.commit, [...commits]),
        branch === undefined ? undefined : eq(runs.branch, branch),
        status === undefined ? undefined : eq(runs.status, status),
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit);
}
