import { and, desc, eq, inArray } from 'drizzle-orm';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import { CANDIDATE_LIMIT } from '../../core/manifest-key.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import type { Database } from '../db/database.js';
import { toCacheEntry } from './to-cache-entry.js';

/**
 * The cache entries of a traced stage's manifest key that a run may read (same scope
 * rules as findCacheEntry), newest first and at most `limit`: a lookup restores the
 * first whose read set still holds.
 */
export async function findCacheCandidates({
  db,
  repository,
  trustDomains,
  manifestKey,
  limit = CANDIDATE_LIMIT,
}: {
  db: Database;
  repository: string;
  trustDomains: readonly string[];
  manifestKey: string;
  limit?: number;
}): Promise<CacheEntry[]> {
  if (trustDomains.length === 0) return [];
  const rows = await db
    .select()
    .from(cacheEntries)
    .where(
      and(
        eq(cacheEntries.repository, repository),
        inArray(cacheEntries.trustDomain, [...trustDomains]),
        eq(cacheEntries.manifestKey, manifestKey),
      ),
    )
    .orderBy(desc(cacheEntries.createdAt), desc(cacheEntries.runId))
    .limit(limit);
  return rows.map(toCacheEntry);
}
