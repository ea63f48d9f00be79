import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { PreviousStage } from '../../schemas/previous-stage.js';
import { LeaseId } from '../../schemas/protocol/lease-id.js';
import type { CacheCandidates } from '../../schemas/protocol/cache-candidates.js';
import { findCacheCandidates } from '../../store/cache/find-cache-candidates.js';
import { findCacheEntry } from '../../store/cache/find-cache-entry.js';
import { previousStageInputs } from '../../store/cache/previous-stage-inputs.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { holdLease } from '../http/hold-lease.js';
import { HttpError } from '../http/http-error.js';
import { parseInput } from '../http/parse-input.js';
import { readHeader } from '../http/read-header.js';
import { requestAuth } from '../http/request-auth.js';
import type { RouteContext } from '../route-context.js';
import { trustDomainsOf } from '../trust-domains-of.js';

const RunParams = z.object({ id: z.string().min(1).max(64) });
const LatestQuery = z.object({
  stage: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected a stage name' }),
});

const CacheParams = z.object({
  id: z.string().min(1).max(64),
  key: z.string().regex(/^[0-9a-f]{64}$/, { error: 'expected a cache key (64 lowercase hex digits)' }),
});

const CandidatesParams = z.object({
  id: z.string().min(1).max(64),
  manifestKey: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: 'expected a manifest key (64 lowercase hex digits)' }),
});

/**
 * `GET /api/v1/runs/:id/cache/:key` (lease header) → the entry | 404: a stage cache lookup
 * for the run the runner holds, scoped to that run's repository and the trust domains it
 * may read, so a fork's entry never reaches a trusted run and no repository reads
 * another's.
 */
export function cacheRoute(app: FastifyInstance, context: RouteContext): void {
  const runnerAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  const onRequest = runnerAuth.onRequest;
  app.get('/api/v1/runs/:id/cache/:key', { onRequest }, async (request): Promise<CacheEntry> => {
    const runner = runnerAuth.of(request);
    const { id: runId, key } = parseInput(CacheParams, request.params, 'params');
    const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, 'the lease this run was claimed with');
    const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
    const entry = await findCacheEntry({
      db: context.db,
      repository: run.repository,
      trustDomains: trustDomainsOf(run.trustDomain),
      key,
    });
    if (!entry) throw new HttpError(404, `No cache entry with key ${key} is visible to run ${runId}`, 'key');
    return entry;
  });

  /**
   * `GET /api/v1/runs/:id/cache-candidates/:manifestKey` (lease header) → `{entries}`: the
   * entries of a traced stage's manifest key visible to the run (same scoping), newest
   * first and bounded. The runner checks their read sets against its checkout.
   */
  app.get('/api/v1/runs/:id/cache-candidates/:manifestKey', async (request): Promise<CacheCandidates> => {
    const runner = await authenticateRunner(context.db, request, context.settings.onlineWindowMs);
    const { id: runId, manifestKey } = parseInput(CandidatesParams, request.params, 'params');
    const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, 'the lease this run was claimed with');
    const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
    const entries = await findCacheCandidates({
      db: context.db,
      repository: run.repository,
      trustDomains: trustDomainsOf(run.trustDomain),
      manifestKey,
    });
    return { entries };
  });

  /**
   * `GET /api/v1/runs/:id/cache?stage=NAME` (lease header) → that stage's key inputs in the
   * previous run of the same pipeline in the run's repository, among the runs it may read
   * the cache of | 404: what a miss is compared with to say why it re-ran — the run before,
   * not whichever cache entry is newest, so a reason never names a change that did not happen.
   */
  app.get('/api/v1/runs/:id/cache', { onRequest }, async (request): Promise<PreviousStage> => {
    const runner = runnerAuth.of(request);
    const { id: runId } = parseInput(RunParams, request.params, 'params');
    const { stage } = parseInput(LatestQuery, request.query, 'query');
    const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, 'the lease this run was claimed with');
    const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
    const previous = await previousStageInputs({
      db: context.db,
      repository: run.repository,
      pipelinePath: run.pipelinePath,
      trustDomains: trustDomainsOf(run.trustDomain),
      stage,
      beforeRunId: run.id,
    });
    if (!previous)
      throw new HttpError(404, `No earlier run of stage ${stage} is visible to run ${runId}`, 'stage');
    return previous;
  });
}
