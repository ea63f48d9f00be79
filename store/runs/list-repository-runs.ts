import { and, desc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { RunStatus } from '../../schemas/statuses.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/** Which of a repository's runs a list shows. */
export interface RunListFilter {
  repository: string;
  /** Only this pull request's runs. */
  prNumber?: number | undefined;
  branch?: string | undefined;
  /** Any of these states. */
  statuses?: readonly RunStatus[] | undefined;
  /** Param name → the value as typed (`0.1`): matches the number 0.1, the string "0.1" alike. */
  params?: Readonly<Record<string, string>> | undefined;
}

/**
 * A page of a repository's runs, newest first, filtered (the run lists): `limit` runs made
 * before the run `before` (keyset pagination on `(created_at, id)`, so a page never shifts
 * or repeats as new runs arrive, and a deep page costs what the first does), and the id to
 * pass as `before` for the next page, or null on the last.
 */
export async function listRepositoryRuns({
  db,
  filter,
  before,
  limit,
}: {
  db: Database;
  filter: RunListFilter;
  before?: string | undefined;
  limit: number;
}): Promise<{ runs: Run[]; next: string | null }> {
  const conditions: (SQL | undefined)[] = [
    eq(runs.repository, filter.repository),
    filter.prNumber === undefined ? undefined : eq(runs.prNumber, filter.prNumber),
    filter.branch === undefined ? undefined : eq(runs.branch, filter.branch),
    filter.statuses?.length ? inArray(runs.status, [...filter.statuses]) : undefined,
    ...Object.entries(filter.params ?? {}).map(([name, typed]) => paramMatches(name, typed)),
    before === undefined
      ? undefined
      : sql`(${runs.createdAt}, ${runs.id}) < (select r.created_at, r.id from runs r where r.id = ${before})`,
  ];
  const found = await db
    .select()
    .from(runs)
    .where(and(...conditions))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit + 1);
  const page = found.slice(0, limit);
  return { runs: page, next: found.length > limit ? (page.at(-1)?.id ?? null) : null };
}

/** A param equal to what was typed, read as each type a param can have (jsonb compares numbers by value). */
function paramMatches(name: string, typed: string): SQL | undefined {
  const candidates: unknown[] = [typed];
  if (typed.trim() !== '' && Number.isFinite(Number(typed))) candidates.push(Number(typed));
  if (typed === 'true' || typed === 'false') candidates.push(typed === 'true');
  return or(...candidates.map((value) => sql`${runs.params} @> ${JSON.stringify({ [name]: value })}::jsonb`));
}
