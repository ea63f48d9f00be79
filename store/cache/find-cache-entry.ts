import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import type { Database } from '../db/database.js';
import { toCacheEntry } from './to-cache-entry.js';

/**
 * The stage cache entry for `key` that a run may read: one of `repository`'s, in one of
 * `trustDomains` (a trusted run passes `['trusted']`, a fork PR's run `['trusted', 'pr:<n>']`).
 * When several domains hold the key, the trusted entry wins.
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
  if (trustDomains.length === 0) return null;
  const [row] = await db
    .select()
    .from(cacheEntries)
    .where(
      and(
        eq(cacheEntries.repository, repository),
        inArray(cacheEntries.trustDomain, [...trustDomains]),
        eq(cacheEntries.key, key),
      ),
    )
    .orderBy(desc(sql`${cacheEntries.trustDomain} = 'trusted'`), desc(cacheEntries.createdAt))
    .limit(1);
  return row ? toCacheEntry(row) : null;
}
