import { desc, eq } from 'drizzle-orm';
import type { CacheEntry } from '../schemas/cache-entry.js';
import { CANDIDATE_LIMIT } from '../schemas/manifest-key.js';
import { cacheEntries } from '../schemas/tables/cache-entries.js';
import type { Database } from './database.js';
import { readableCacheEntries } from './readable-cache-entries.js';
import { toCacheEntry } from './to-cache-entry.js';

/**
 * The cache entries of a traced stage's manifest key that a run may read (readableCacheEntries,
 * as findCacheEntry), newest first and at most `limit`: a lookup restores the
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
  const readable = readableCacheEntries({
    repository,
    trustDomains,
    key: eq(cacheEntries.manifestKey, manifestKey),
  });
  if (!readable) return [];
  const rows = await db
    .select()
    .from(cacheEntries)
    .where(readable)
    .orderBy(desc(cacheEntries.createdAt), desc(cacheEntries.runId))
    .limit(limit);
  return rows.map(toCacheEntry);
}
