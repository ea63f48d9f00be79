import { z } from 'zod';

/**
 * `GET /api/v1/team-cache?repository=` → that the token may read the repository's team
 * cache, and how many trusted entries it holds: what `fluksio run --remote-cache` checks
 * once before its stages, so a wrong token is refused before anything runs.
 */
export const TeamCacheReach = z.strictObject({
  repository: z.string(),
  trustedEntries: z.number().int().nonnegative(),
});
export type TeamCacheReach = z.infer<typeof TeamCacheReach>;
