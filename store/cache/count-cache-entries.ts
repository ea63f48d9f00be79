import { count, sql } from 'drizzle-orm';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import type { Database } from '../db/database.js';
import { readableCacheEntries } from './readable-cache-entries.js';

/** How many stage cache entries of `repository` a reader of `trustDomains` may read (readableCacheEntries). */
export async function countCacheEntries({
  db,
  repository,
  trustDomains,
}: {
  db: Database;
  repository: string;
  trustDomains: readonly string[];
}): Promise<number> {
  const readable = readableCacheEntries({ repository, trustDomains, key: sql`true` });
  if (!readable) return 0;
  const [row] = await db.select({ entries: count() }).from(cacheEntries).where(readable);
  return row?.entries ?? 0;
}
