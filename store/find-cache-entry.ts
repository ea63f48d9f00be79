import { desc, eq, sql } from 'drizzle-orm';
import type { CacheEntry } from '../schemas/cache-entry.js';
import { cacheEntries } from '../schemas/tables/cache-entries.js';
import type { Database } from './database.js';
import { readableCacheEntries } from './readable-cache-entries.js';
import { toCacheEntry } from './to-cache-entry.js';

/**
 * The stage cache entry for `key` that a run may read (readableCacheEntries: `repository`'s,
 * in one of `trustDomains`). When several domains hold the key, the trusted entry wins.
 */
export async function findCacheEntry({
  db,
  repository,
  trustDomains,
  key,
}: {
  db: Database;
  repository: string;
  trustDomains: readonly string[];
  key: string;
}): Promise<CacheEntry | null> {
  const readable = readableCacheEntries({ repository, trustDomains, key: eq(cacheEntries.key, key) });
  if (!readable) return null;
  const [row] = await db
    .select()
    .from(cacheEntries)
    .where(readable)
    .orderBy(desc(sql`${cacheEntries.trustDomain} = 'trusted'`), desc(cacheEntries.createdAt))
    .limit(1);
  return row ? toCacheEntry(row) : null;
}
