import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { controlPlaneGauges } from '../../store/runs/control-plane-gauges.js';
import { HttpError } from '../http/http-error.js';
import type { RouteContext } from '../route-context.js';

/**
 * `GET /metrics` in Prometheus's text format: queued runs per label set, runs per state
 * and runners online, read from Postgres at each scrape (so every replica reports the
 * same numbers), and what the routes count in this process (the blob bytes that passed
 * through it, the claims and cancel watches parked in it, the live page streams open in
 * it). When FLUKSIO_METRICS_TOKEN is set, a scrape must bear it.
 */
export function prometheusRoute(app: FastifyInstance, context: RouteContext): void {
  const registry = context.metrics;
  const queueDepth = new Gauge({
    name: 'fluksio_queue_depth',
    help: 'Queued runs, per set of runner labels they need (comma-separated, sorted)',
    labelNames: ['labels'],
    registers: [registry],
  });
  const runsByStatus = new Gauge({
    name: 'fluksio_runs',
    help: 'Runs per state',
    labelNames: ['status'],
    registers: [registry],
  });
  const runnersOnline = new Gauge({
    name: 'fluksio_runners_online',
    help: 'Runners seen within the online window (FLUKSIO_ONLINE_WINDOW)',
    registers: [registry],
  });
  new Gauge({
    name: 'fluksio_claims_parked',
    help: "Runners' claims waiting in this process for a run to come (long-polls with nothing to take yet)",
    registers: [registry],
    collect() {
      this.set(context.doorbell.parked);
    },
  });
  new Gauge({
    name: 'fluksio_cancel_watches_parked',
    help: "Runners' watches for the stop of the run they hold, parked in this process (long-polls with nothing to answer yet)",
    registers: [registry],
    collect() {
      this.set(context.cancelWatches.parked);
    },
  });
  new Gauge({
    name: 'fluksio_live_streams_waiting',
    help: "Run pages' live streams in this process reading or waiting for their run's next change",
    registers: [registry],
    collect() {
      this.set(context.runBell.waiting);
    },
  });

  app.get('/metrics', async (request, reply) => {
    const { metricsToken } = context.settings;
    if (metricsToken !== null && !sameSecret(request.headers.authorization ?? '', `Bearer ${metricsToken}`)) {
      throw new HttpError(
        401,
        'Authorization: /metrics requires "Bearer <FLUKSIO_METRICS_TOKEN>"',
        'Authorization',
      );
    }
    const gauges = await controlPlaneGauges({
      db: context.db,
      onlineWindowMs: context.settings.onlineWindowMs,
    });
    // Reset first, so a label set with nothing queued any more is dropped, not frozen.
    queueDepth.reset();
    for (const { labels, count } of gauges.queueDepth)
      queueDepth.set({ labels: [...labels].sort().join(',') }, count);
    runsByStatus.reset();
    for (const { status, count } of gauges.runsByStatus) runsByStatus.set({ status }, count);
    runnersOnline.set(gauges.runnersOnline);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** Compares secrets in constant time (over their hashes, so lengths leak nothing either). */
function sameSecret(given: string, expected: string): boolean {
  const hash = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(hash(given), hash(expected));
}
