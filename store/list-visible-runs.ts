import { and, desc, inArray, sql } from 'drizzle-orm';
import { runs, type Run } from '../schemas/tables/runs.js';
import type { Database } from './database.js';
import { escapeLike } from './escape-like.js';

/**
 * The newest `limit` runs of `repositories` (the ones an API token reaches), optionally
 * only those whose id starts with `prefix` (any case: ULIDs are upper case, people type
 * lower) — `GET /api/v1/runs`, for `fluksio runs --remote` and for resolving the short
 * ids fluksio prints. Runs of other repositories are never matched, so a prefix tells a
 * token nothing about runs it may not see.
 */
export async function listVisibleRuns({
  db,
  repositories,
  prefix,
  limit,
}: {
  db: Database;
  repositories: readonly string[];
  prefix?: string;
  limit: number;
}): Promise<Run[]> {
  if (repositories.length === 0) return [];
  return db
    .select()
    .from(runs)
    .where(
      and(
        inArray(runs.repository, [...repositories]),
        prefix ? sql`upper(${runs.id}) like ${`${escapeLike(prefix.toUpperCase())}%`}` : undefined,
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit);
}
