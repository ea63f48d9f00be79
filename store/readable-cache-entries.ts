import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { cacheEntries } from '../schemas/tables/cache-entries.js';

/**
 * Which stage cache entries a run may read (DESIGN §7): its own repository's, in one of
 * `trustDomains` (a trusted run passes `['trusted']`, a fork PR's run `['trusted', 'pr:<n>']`),
 * and matching `key`. Null when the run may read none (no trust domain), so a caller
 * answers "nothing" without asking the database. One scope for the lookups by exact key
 * and by manifest key, so they never disagree about what a run may see.
 */
export function readableCacheEntries({
  repository,
  trustDomains,
  key,
}: {
  repository: string;
  trustDomains: readonly string[];
  key: SQL;
}): SQL | null {
  if (trustDomains.length === 0) return null;
  return (
    and(eq(cacheEntries.repository, repository), inArray(cacheEntries.trustDomain, [...trustDomains]), key) ??
    null
  );
}
