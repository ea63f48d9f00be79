import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ApiError } from '../schemas/protocol/api-error.js';
import { SUPPORTED_PROTOCOLS, type ProtocolRange } from '../schemas/protocol/protocol-version.js';
import { FLUKSIO_VERSION } from '../core/fluksio-version.js';
import type { Database } from '../store/db/database.js';
import { Registry } from 'prom-client';
import { BlobByteCounters } from './blobs/blob-byte-counters.js';
import type { BlobStorage } from './blobs/blob-storage.js';
import { CancelWatches } from './cancel-watches.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import { fetchWithDeadline } from './github/fetch-with-deadline.js';
import { HttpError } from './http/http-error.js';
import { lingerBeforeClose } from './http/linger-before-close.js';
import { loggableError } from './http/loggable-error.js';
import { protocolGate } from './http/protocol-gate.js';
import type { GitCredentials, RouteContext } from './route-context.js';
import { doorbellChannel, RunDoorbell } from './run-doorbell.js';
import { findLeasedRun } from '../store/leases/find-leased-run.js';
import { ClaimHandoff } from './claim-handoff.js';
import { RunBell, runBellChannel } from './run-bell.js';
import { blobRoutes } from './routes/blob-routes.js';
import { blobUploadRoutes } from './routes/blob-upload-routes.js';
import { cacheRoute } from './routes/cache-route.js';
import { teamCacheRoute } from './routes/team-cache-route.js';
import { claimRoute } from './routes/claim-route.js';
import { fetchedRoute } from './routes/fetched-route.js';
import { githubWebhookRoute, WEBHOOK_PATH, type WebhookMiddleware } from './routes/github-webhook-route.js';
import { healthRoutes } from './routes/health-routes.js';
import { leasedRunRoutes } from './routes/leased-run-routes.js';
import { resumeRoute } from './routes/resume-route.js';
import { prometheusRoute } from './routes/prometheus-route.js';
import { runRoutes } from './routes/run-routes.js';
import { runWatchRoute } from './routes/run-watch-route.js';
import { submitRoute } from './routes/submit-route.js';
import { QuietRequestLogs } from './quiet-request-logs.js';
import { controlPlanePageGate } from './pages/control-plane-page-gate.js';
import { readPageAssets } from './pages/page-assets.js';
import { pageLinkSecret } from './pages/page-link-secret.js';
import { PageLinkSigner } from './pages/page-link-signer.js';
import { pageRoutes } from './pages/page-routes.js';
import { createPageSignIn } from './pages/page-sign-in.js';
import { signInRoutes } from './pages/sign-in-routes.js';
import { controlPlanePageSource } from './pages/control-plane-page-source.js';

export interface ServerDependencies {
  db: Database;
  /** A connection for commands; the server makes its own subscriber from it. */
  redis: Redis;
  settings: ControlPlaneSettings;
  blobs: BlobStorage;
  logger: Logger;
  /** The GitHub App's parts, when it is configured (startGitHubApp makes them). */
  github?: GitHubServerParts;
  /**
   * Whether the runner, submit and webhook routes are served; without them only health,
   * readiness and metrics are (a `--role worker` process). @defaultValue true
   */
  api?: boolean;
  /** Signs the run pages' links; by default one keyed by pageLinkSecret(settings). */
  pageLinks?: PageLinkSigner;
  /**
   * The runner protocols answered (protocol-gate.ts); a test poses as another release
   * with its own. @defaultValue SUPPORTED_PROTOCOLS
   */
  protocols?: ProtocolRange;
}

/** What the HTTP API needs of the GitHub App. */
export interface GitHubServerParts {
  /** Probot's middleware, mounted at `POST /api/github/webhooks`. */
  webhooks: WebhookMiddleware;
  /** Mints a claimed run's fetch credential, and revokes it after the fetch. */
  gitCredentials: GitCredentials;
  /** Called with a run's id whenever a route changed it, so its check run follows. */
  onRunChanged(runId: string): void;
}

/** How long a refused body's connection stays open after the answer, at most (linger-before-close.ts). */
const LINGER_MS = 1000;

/** The body limit of a route that sets none: a few kilobytes of JSON. */
const DEFAULT_BODY_LIMIT = 64 * 1024;

/**
 * The control plane's HTTP API (DESIGN §6), not yet listening: the runner protocol
 * (claim, heartbeat, watch, start, events, finish, release, cache lookups, blobs), the
 * submitter API (queue, read, cancel runs), health, readiness and Prometheus metrics,
 * the run pages (app/pages/), and with `github` the GitHub App's webhooks and claim-time
 * git credentials. Every API error is `{ error, field }` JSON; every answer names the
 * protocol spoken, and a client of a protocol outside `protocols` is answered 426
 * (protocol-gate.ts). Closing the server ends waiting claims and watches at once and
 * unsubscribes from Redis; the caller closes `db` and `redis`.
 */
export function buildServer({
  db,
  redis,
  settings,
  blobs,
  logger,
  github,
  api = true,
  pageLinks = defaultPageLinks(settings, logger),
  protocols = SUPPORTED_PROTOCOLS,
}: ServerDependencies): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // What a lease, a claim or a cancel reason needs. Routes that take more say how much
    // (events, finish, submit, webhooks); blob uploads stream to disk under their own limit.
    bodyLimit: DEFAULT_BODY_LIMIT,
    logController: new QuietRequestLogs(),
    // Unique across replicas, so the id a 500 names finds its log line.
    genReqId: () => randomUUID(),
  });
  const signIn =
    api && settings.github?.signIn
      ? createPageSignIn({
          github: settings.github,
          redis,
          queuePrefix: settings.queuePrefix,
          secret: pageLinkSecret(settings).secret,
          fetch: fetchWithDeadline(settings.github.requestTimeoutMs),
        })
      : null;
  // Before any route, so that every route's requests have their cookies parsed.
  if (signIn) void app.register(fastifyCookie, { secret: signIn.cookieSecret });
  const doorbell = new RunDoorbell(redis, doorbellChannel(settings.queuePrefix), logger);
  const runBell = new RunBell(redis, runBellChannel(settings.queuePrefix), logger);
  // The same bell on a subscriber of its own: its waiters are the runners' watches, not pages.
  const watchBell = new RunBell(redis, runBellChannel(settings.queuePrefix), logger);
  const closing = new AbortController();
  // Every parked claim and cancel watch listens on it (request-abort.ts), each removing its
  // listener when answered: a fleet of runners is not a leak, and Node's warning past ten
  // listeners would say it was.
  setMaxListeners(0, closing.signal);
  const metrics = new Registry();
  const context: RouteContext = {
    db,
    redis,
    settings,
    blobs,
    blobBytes: new BlobByteCounters(metrics),
    metrics,
    doorbell,
    handoff: new ClaimHandoff((leaseId) => findLeasedRun({ db, leaseId })),
    runBell,
    cancelWatches: new CancelWatches({ db, bell: watchBell, recheckMs: settings.claimRecheckMs }),
    closing: closing.signal,
    // Its check run follows, and its open pages look again.
    onRunChanged: (runId) => {
      void runBell.ring(runId);
      github?.onRunChanged(runId);
    },
    ...(github ? { gitCredentials: github.gitCredentials } : {}),
  };

  app.addHook('onReady', async () => {
    doorbell.listen();
    runBell.listen();
    if (api) watchBell.listen();
  });
  app.addHook('preClose', async () => {
    closing.abort();
    // server.close() closes the keep-alive connections that are idle at that instant,
    // once; one whose response was still finishing (a streamed blob) would then hold the
    // close up for the whole keep-alive timeout (72 s). Reap them as they become idle.
    const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
    reaper.unref();
    app.server.once('close', () => clearInterval(reaper));
  });
  app.addHook('onClose', async () => {
    await doorbell.close();
    await runBell.close();
    await watchBell.close();
  });
  // Before every route's own hooks: a client of another protocol hears so before a 401.
  app.addHook(
    'onRequest',
    protocolGate({ range: protocols, version: FLUKSIO_VERSION, exempt: [WEBHOOK_PATH] }),
  );
  // An answer given before the body was read (a refused token, a body over the limit)
  // closes the connection: otherwise Node reads and discards the rest of the body, however
  // large, to keep the connection alive for a next request.
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.raw.complete) {
      reply.header('connection', 'close');
      lingerBeforeClose(request.raw.socket, LINGER_MS);
    }
    return payload;
  });
  app.setErrorHandler(async (error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      const body: ApiError =
        error.field === undefined ? { error: error.message } : { error: error.message, field: error.field };
      return reply.code(error.statusCode).send(body);
    }
    // Fastify's own refusals (malformed JSON, a body over the limit) are the caller's fault
    // too; their messages are fixed sentences that never repeat the input.
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      const message =
        error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `is larger than ${request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT} bytes, the most ${request.method} ${request.routeOptions.url ?? request.url} accepts`
          : error.message;
      return reply
        .code(error.statusCode)
        .send({ error: `body: ${message}`, field: 'body' } satisfies ApiError);
    }
    // The details (an SQL error, the input it choked on) go to the log under the request's
    // id, never into the answer.
    request.log.error(loggableError(error), 'request failed');
    return reply.code(500).send({
      error: `The control plane failed to answer this request; its log says why under request id ${request.id}`,
      requestId: request.id,
    } satisfies ApiError);
  });
  app.setNotFoundHandler(async (request, reply) =>
    reply
      .code(404)
      .send({ error: `No such endpoint: ${request.method} ${request.url.split('?')[0]}` } satisfies ApiError),
  );

  healthRoutes(app, context);
  prometheusRoute(app, context);
  if (!api) return app;
  claimRoute(app, context);
  leasedRunRoutes(app, context);
  runWatchRoute(app, context);
  resumeRoute(app, context);
  fetchedRoute(app, context);
  cacheRoute(app, context);
  teamCacheRoute(app, context);
  blobRoutes(app, context);
  blobUploadRoutes(app, context);
  submitRoute(app, context);
  runRoutes(app, context);
  if (github) githubWebhookRoute(app, github.webhooks);
  if (signIn) signInRoutes(app, signIn);
  pageRoutes(app, {
    source: controlPlanePageSource({ db, blobs, blobBytes: context.blobBytes }),
    gate: controlPlanePageGate({ db, signer: pageLinks, signIn }),
    assets: () => readPageAssets(),
    changes: runBell,
  });
  return app;
}

function defaultPageLinks(settings: ControlPlaneSettings, logger: Logger): PageLinkSigner {
  const { secret, shared } = pageLinkSecret(settings);
  if (!shared)
    logger.warn(
      'FLUKSIO_PAGES_SECRET is not set and no GitHub App is configured: signed page links last until this process stops',
    );
  return new PageLinkSigner(secret, settings.pageLinkTtlMs);
}
