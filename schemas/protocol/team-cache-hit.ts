import { z } from 'zod';
import { CacheEntry } from '../cache-entry.js';
import { MetricPoint } from '../metric-point.js';

/**
 * `GET /api/v1/team-cache/:key?repository=` → a trusted cache entry of the repository (what
 * a team's runner computed on approved code) and the series its stage streamed in the run
 * that made it, so a laptop restoring it shows the same curves.
 */
export const TeamCacheHit = z.strictObject({ entry: CacheEntry, points: z.array(MetricPoint) });
export type TeamCacheHit = z.infer<typeof TeamCacheHit>;
