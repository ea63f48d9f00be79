import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CacheCandidates } from '../../schemas/protocol/cache-candidates.js';
import type { TeamCacheHit } from '../../schemas/protocol/team-cache-hit.js';
import { TeamCacheQuery } from '../../schemas/protocol/team-cache-query.js';
import type { TeamCacheReach } from '../../schemas/protocol/team-cache-reach.js';
import type { ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import { cacheEntryPoints } from '../../store/cache/cache-entry-points.js';
import { countCacheEntries } from '../../store/cache/count-cache-entries.js';
import { findCacheCandidates } from '../../store/cache/find-cache-candidates.js';
import { findCacheEntry } from '../../store/cache/find-cache-entry.js';
import { authenticateSubmitter, tokenReaches } from '../http/authenticate-submitter.js';
import { HttpError } from '../http/http-error.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import type { RouteContext } from '../route-context.js';

/**
 * The only entries a team's cache serves: those the control plane wrote from its runners'
 * runs of pushed or same-repository code (trust domain `trusted`), never a fork's pull
 * request's (`pr:<n>`). Nothing a laptop computes ever reaches the control plane's cache.
 */
const TEAM_TRUST_DOMAINS = ['trusted'] as const;

const KeyParams = z.strictObject({
  key: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a cache key (64 lowercase hex digits)' }),
});
const ManifestParams = z.strictObject({
  manifestKey: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: 'expected a manifest key (64 lowercase hex digits)' }),
});

/**
 * The team's cache, read with an API token (`read` is enough) by `fluksio run
 * --remote-cache` on a laptop (issue 13): the trusted entries of one repository the token
 * reaches, looked up exactly as a runner's run looks them up (by cache key, or for a traced
 * stage the candidates of its manifest key, whose read sets the laptop checks against its
 * own files). The outs' bytes are then read through the blob routes, with the entry's run.
 *
 * - `GET /api/v1/team-cache?repository=R` → TeamCacheReach: the token may read R's cache.
 * - `GET /api/v1/team-cache/:key?repository=R` → TeamCacheHit | 404.
 * - `GET /api/v1/team-cache/candidates/:manifestKey?repository=R` → CacheCandidates.
 */
export function teamCacheRoute(app: FastifyInstance, context: RouteContext): void {
  const { db } = context;
  const readAuth = requestAuth((request) => authenticateSubmitter(db, request, 'read'));
  const onRequest = readAuth.onRequest;

  app.get('/api/v1/team-cache', { onRequest }, async (request): Promise<TeamCacheReach> => {
    const repository = reachedRepository(readAuth.of(request), request.query);
    const trustedEntries = await countCacheEntries({ db, repository, trustDomains: TEAM_TRUST_DOMAINS });
    return { repository, trustedEntries };
  });

  app.get('/api/v1/team-cache/:key', { onRequest }, async (request): Promise<TeamCacheHit> => {
    const repository = reachedRepository(readAuth.of(request), request.query);
    const { key } = parseInput(KeyParams, request.params, 'params');
    const entry = await findCacheEntry({ db, repository, trustDomains: TEAM_TRUST_DOMAINS, key });
    if (!entry) throw new HttpError(404, `No trusted cache entry of ${repository} has key ${key}`, 'key');
    return { entry, points: await cacheEntryPoints({ db, entry }) };
  });

  app.get(
    '/api/v1/team-cache/candidates/:manifestKey',
    { onRequest },
    async (request): Promise<CacheCandidates> => {
      const repository = reachedRepository(readAuth.of(request), request.query);
      const { manifestKey } = parseInput(ManifestParams, request.params, 'params');
      const entries = await findCacheCandidates({
        db,
        repository,
        trustDomains: TEAM_TRUST_DOMAINS,
        manifestKey,
      });
      return { entries };
    },
  );
}

/**
 * The repository the query names, once the token is known to reach it; 403 otherwise,
 * naming the token: a person reads this when `--remote-cache` is refused.
 */
function reachedRepository(token: ApiTokenRow, query: unknown): string {
  const { repository } = parseInput(TeamCacheQuery, query ?? {}, 'query');
  if (!tokenReaches(token, repository)) {
    throw new HttpError(
      403,
      `API token "${token.name}" does not reach ${repository}: make one for it with \`fluksio token add --repo ${repository}\``,
      'repository',
    );
  }
  return repository;
}
