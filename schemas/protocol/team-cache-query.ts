import { z } from 'zod';
import { RepositoryName } from './repository-name.js';

/**
 * `GET /api/v1/team-cache…?repository=owner/name`: the repository whose team cache a
 * laptop's `fluksio run --remote-cache` reads (one its read token reaches).
 */
export const TeamCacheQuery = z.strictObject({ repository: RepositoryName });
export type TeamCacheQuery = z.infer<typeof TeamCacheQuery>;
