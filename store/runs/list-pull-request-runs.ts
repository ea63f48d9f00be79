import { and, asc, eq, inArray, ne, type SQL } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * A pull request's runs that are still queued or running, oldest first (DESIGN §8): what
 * `/fluksio cancel` acts on, or with `automaticOnly` what a new push to the pull request
 * cancels — never runs someone asked for. `exceptCommit` keeps the runs of the new head;
 * `commit` lists only the runs of that one.
 */
export async function listPullRequestRuns({
  db,
  repository,
  prNumber,
  automaticOnly = false,
  exceptCommit,
  commit,
}: {
  db: Database;
  repository: string;
  prNumber: number;
  automaticOnly?: boolean;
  exceptCommit?: string;
  commit?: string;
}): Promise<Run[]> {
  const conditions: (SQL | undefined)[] = [
    eq(runs.repository, repository),
    eq(runs.prNumber, prNumber),
    inArray(runs.status, ['queued', 'running']),
    automaticOnly ? eq(runs.automatic, true) : undefined,
    exceptCommit === undefined ? undefined : ne(runs.commit, exceptCommit),
    commit === undefined ? undefined : eq(runs.commit, commit),
  ];
  return db
    .select()
    .from(runs)
    .where(and(...conditions))
    .orderBy(asc(runs.createdAt), asc(runs.id));
}
