import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { HealthReply } from '../../schemas/protocol/health-reply.js';
import type { RouteContext } from '../route-context.js';
import { messageOf } from '../../core/text/message-of.js';

/** How long readiness waits for each dependency before calling it unreachable. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * `GET /healthz` (the process answers: liveness) and `GET /readyz` (Postgres, Redis and
 * the blob store answer too: 200, or 503 naming what is unreachable). Neither needs a
 * credential.
 */
export function healthRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/healthz', async (): Promise<HealthReply> => ({ ok: true }));

  app.get('/readyz', async (request, reply) => {
    const [postgres, redis, blobs] = await Promise.all([
      probe(async () => {
        await context.db.execute(sql`select 1`);
      }),
      probe(async () => {
        await context.redis.ping();
      }),
      probe(() => context.blobs.check()),
    ]);
    const down = [
      postgres === 'ok' ? null : `Postgres (${postgres})`,
      redis === 'ok' ? null : `Redis (${redis})`,
      blobs === 'ok' ? null : `the blob store ${context.blobs.location} (${blobs})`,
    ].filter((part) => part !== null);
    if (down.length === 0) return { ok: true, postgres, redis, blobs };
    request.log.warn({ postgres, redis, blobs }, 'not ready');
    return reply
      .code(503)
      .send({ error: `Not ready: cannot reach ${down.join(' and ')}`, postgres, redis, blobs });
  });
}

/** 'ok', or why the check failed (its error's message, or that it timed out). */
async function probe(check: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().then(() => 'ok', messageOf), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
