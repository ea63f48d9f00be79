import { z } from 'zod';
import { CacheEntry } from '../cache-entry.js';

/**
 * `GET /api/v1/runs/:id/cache-candidates/:manifestKey` → the entries of a traced stage's
 * manifest key visible to the run, newest first and bounded; the runner checks their
 * read sets and restores the first that holds.
 */
export const CacheCandidates = z.strictObject({ entries: z.array(CacheEntry) });
export type CacheCandidates = z.infer<typeof CacheCandidates>;
