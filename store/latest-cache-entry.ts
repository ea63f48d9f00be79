import { and, desc, eq, inArray } from 'drizzle-orm';
import type { CacheEntry } from '../schemas/cache-entry.js';
import { cacheEntries } from '../schemas/tables/cache-entries.js';
import type { Database } from './database.js';
import { toCacheEntry } from './to-cache-entry.js';

/**
 * The most recent cache entry of a stage with this name that a run may read (same scope
 * rules as findCacheEntry): on a miss, what the engine compares key inputs with to say
 * why the stage re-ran (DESIGN §5).
 */
export async function latestCacheEntry({
  db,
  repository,
  trustDomains,
  stage,
}: {
  db: Database;
  repository: string;
  trustDomains: readonly string[];
  stage: string;
}): Promise<CacheEntry | null> {
  if (trustDomains.length === 0) return null;
  const [row] = await db
    .select()
    .from(cacheEntries)
    .where(
      and(
        eq(cacheEntries.repository, repository),
        inArray(cacheEntries.trustDomain, [...trustDomains]),
        eq(cacheEntries.stage, stage),
      ),
    )
    // Entries written in one transaction share now(); run ids are ULIDs, so they break the tie by time too.
    .orderBy(desc(cacheEntries.createdAt), desc(cacheEntries.runId))
    .limit(1);
  return row ? toCacheEntry(row) : null;
}
