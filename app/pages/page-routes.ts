import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BlobDigest } from '../../schemas/blob-digest.js';
import { parseInput } from '../http/parse-input.js';
import { OutCorruptError } from './out-corrupt-error.js';
import { sendVerifiedOut } from './send-verified-out.js';
import type { PageAssets } from './page-assets.js';
import type { PageGate } from './page-gate.js';
import { messagePage, pageShell } from './page-shell.js';
import type { PageSource } from './page-source.js';
import { pollingRunChanges } from './polling-run-changes.js';
import { renderCurvesSvg, type SvgCurve } from './render-curves-svg.js';
import { parseStepsHeld } from './parse-steps-held.js';
import type { RunChanges } from './run-changes.js';
import { streamRunUpdates } from './stream-run-updates.js';
import { RUN_LIST_PAGE_SIZE, RunListQuery, runListFilter } from './run-list-query.js';
import { parseLogCursor, streamStageLog } from './stream-stage-log.js';

/** What the pages are served from, who may see them, and the bundle to serve. */
export interface PageRoutesOptions {
  source: PageSource;
  gate: PageGate;
  /** Read once, on the first request for an asset. */
  assets: () => Promise<PageAssets>;
  /**
   * What tells a live page's streams that a run changed (a control plane's RunBell).
   * @defaultValue pollingRunChanges(livePollMs): a look every livePollMs
   */
  changes?: RunChanges;
  /**
   * The longest a live stream waits before it looks again without being told: with
   * `changes`, a lost ring costs this much; without, every change does. @defaultValue 1000 with `changes`, else 100
   */
  livePollMs?: number;
}

const Id = z.string().min(1).max(64);
const IdParams = z.object({ id: Id });
const LogParams = z.object({ id: Id, stage: z.string().min(1).max(200) });
const OutParams = z.object({ id: Id, digest: BlobDigest });
const LogQuery = z
  .object({
    after: z
      .string()
      .regex(/^\d{1,15}\.\d{1,15}$/, 'expected a log cursor, line.position (e.g. 120.7)')
      .optional(),
  })
  .loose();
/** The image's curves are cut down in the database to about its plot's width. */
const SVG_BUCKETS = 560;
/** A run's update asked for without a width is cut down to a page's chart's (pages' CHART_WIDTH). */
const UPDATE_BUCKETS = 560;
/** At most this many runs side by side: more curves than anyone can tell apart. */
const MAX_COMPARED = 32;
/** Pixels a chart draws points in; at most a wide screen's. */
const Buckets = z.coerce
  .number()
  .int('expected whole pixels')
  .min(16, 'expected at least 16 pixels')
  .max(8192, 'expected at most 8192 pixels');
const StepsHeld = z
  .string()
  .max(20_000)
  .transform((text, context) => {
    const held = parseStepsHeld(text);
    if (held === null)
      context.addIssue({
        code: 'custom',
        message: 'expected name:step pairs separated by commas (loss:120,acc:120)',
      });
    return held ?? new Map<string, number>();
  });
const Step = z.coerce.number().refine(Number.isFinite, 'expected a step, a finite number');
const SeriesQuery = z
  .object({ name: z.string().min(1).max(200), from: Step, to: Step, buckets: Buckets })
  .loose();
const LiveQuery = z.object({ after: StepsHeld.optional(), buckets: Buckets }).loose();
const RunQuery = z
  .object({
    buckets: Buckets.optional(),
    after: z
      .string()
      .max(20_000)
      .transform((text, context) => {
        const held = parseStepsHeld(text);
        if (held === null)
          context.addIssue({
            code: 'custom',
            message: 'expected name:step pairs separated by commas (loss:120,acc:120)',
          });
        return held ?? new Map<string, number>();
      })
      .optional(),
  })
  .loose();
const ChartQuery = z.object({ metric: z.string().min(1).max(200), baseline: Id.optional() }).loose();
const CompareQuery = z
  .object({
    runs: z
      .string()
      .transform((text) => [...new Set(text.split(',').filter(Boolean))])
      .pipe(z.array(Id).min(1).max(MAX_COMPARED)),
  })
  .loose();

/**
 * The run pages (issue 11), served alike by `fluksio app` and `fluksio ui`: the run page
 * (`/runs/:id`), a sweep's page (`/groups/:id`) and a comparison (`/compare?runs=a,b`),
 * each an HTML shell the bundle draws from `/pages/api/…` JSON, and a stage's log as
 * server-sent events. Every page and every answer first asks `gate` about the run's
 * repository; a run the caller may not see answers as one that does not exist.
 */
export function pageRoutes(app: FastifyInstance, options: PageRoutesOptions): void {
  const { source, gate } = options;
  const changes = options.changes ?? pollingRunChanges(options.livePollMs ?? 100);
  const pollMs = options.livePollMs ?? (options.changes ? 1000 : 100);
  // Live logs end when the server closes, or close() would wait for every open page.
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  let assets: Promise<PageAssets> | null = null;
  const loadAssets = (): Promise<PageAssets> => {
    assets ??= options.assets().catch((error: unknown) => {
      assets = null;
      throw error;
    });
    return assets;
  };

  /** Answers the refusal itself and returns false when the request may not see `repositories`. */
  async function admitted(
    request: FastifyRequest,
    reply: FastifyReply,
    repositories: readonly (string | null)[],
    what: string,
    html: boolean,
  ): Promise<boolean> {
    let refusal: { code: number; title: string; message: string } | null = null;
    for (const repository of repositories) {
      const verdict = await gate.admit(request, repository);
      if (verdict === 'allowed') continue;
      if (verdict === 'sign-in') {
        // Asked before anything about the run is known: a run that does not exist is sent
        // to sign in exactly as one that does.
        const login = `/auth/github/login?next=${encodeURIComponent(request.url)}`;
        if (html) await reply.header('cache-control', 'no-store').redirect(login, 302);
        else
          await reply.code(401).send({
            error: `Sign in with GitHub to see this: open ${login} in a browser, or use an API token`,
          });
        return false;
      }
      refusal =
        verdict === 'expired'
          ? {
              code: 403,
              title: 'This link has expired',
              message:
                'Links in check runs and comments expire. Open the run again from its check run on GitHub for a fresh link, or use an API token.',
            }
          : verdict === 'forbidden'
            ? {
                code: 403,
                title: 'Forbidden',
                message:
                  'Open the address "fluksio ui" printed: it carries the secret that opens these pages.',
              }
            : { code: 404, title: 'Not found', message: `There is no ${what}.` };
      break;
    }
    if (refusal === null) return true;
    if (html)
      await reply
        .code(refusal.code)
        .type('text/html; charset=utf-8')
        .send(messagePage(refusal.title, refusal.message));
    else await reply.code(refusal.code).send({ error: `${refusal.title}: ${refusal.message}` });
    return false;
  }

  app.get('/pages/assets/pages.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await loadAssets()).js),
  );
  app.get('/pages/assets/pages.css', async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await loadAssets()).css),
  );

  /** A page's HTML shell (its data comes from /pages/api), once the viewer may see `repositories`. */
  async function sendShell(
    request: FastifyRequest,
    reply: FastifyReply,
    repositories: readonly (string | null)[],
    what: string,
    page: Omit<Parameters<typeof pageShell>[0], 'viewer'>,
  ): Promise<FastifyReply> {
    if (!(await admitted(request, reply, repositories, what, true))) return reply;
    return reply
      .type('text/html; charset=utf-8')
      .send(pageShell({ viewer: await gate.viewer?.(request), ...page }));
  }

  app.get('/runs/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const repository = await source.repositoryOfRun(id);
    return sendShell(request, reply, [repository], `run ${id}`, {
      kind: 'run',
      subject: id,
      title: `Run ${id}`,
    });
  });
  app.get('/groups/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const repository = await source.repositoryOfGroup(id);
    return sendShell(request, reply, [repository], `sweep ${id}`, {
      kind: 'sweep',
      subject: id,
      title: `Sweep ${id}`,
    });
  });
  app.get('/compare', async (request, reply) => {
    const { runs } = parseInput(CompareQuery, request.query, 'runs');
    const repositories = await Promise.all(runs.map((id) => source.repositoryOfRun(id)));
    return sendShell(request, reply, repositories, 'such run', {
      kind: 'compare',
      subject: runs.join(','),
      title: `Compare ${runs.length} runs`,
    });
  });

  // A repository's runs, or a pull request's (`?pr=`), newest first, filtered, a page at a time.
  app.get('/runs', async (request, reply) => {
    const query = parseInput(RunListQuery, request.query, 'query');
    const repository = query.repo ?? source.defaultRepository;
    const title = `Runs of ${repository}${query.pr === undefined ? '' : ` #${query.pr}`}`;
    return sendShell(request, reply, [repository], `repository ${query.repo ?? ''}`, {
      kind: 'runs',
      subject: repository ?? '',
      title,
    });
  });
  app.get('/pages/api/runs', async (request, reply) => {
    const query = parseInput(RunListQuery, request.query, 'query');
    const repository = query.repo ?? source.defaultRepository;
    if (!(await admitted(request, reply, [repository], `repository ${query.repo ?? ''}`, false)))
      return reply;
    const { filter, before } = runListFilter(query, repository!);
    return reply
      .header('cache-control', 'no-store')
      .send(await source.runList(filter, before, RUN_LIST_PAGE_SIZE));
  });

  app.get('/pages/api/runs/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    if (!(await admitted(request, reply, [await source.repositoryOfRun(id)], `run ${id}`, false)))
      return reply;
    const { after, buckets } = parseInput(RunQuery, request.query, 'query');
    // A page that holds nothing gets the page, cut down (to a chart's width, unless it said).
    const data =
      after === undefined
        ? await source.runPage(id, buckets)
        : after.size > 0
          ? await source.runUpdate(id, after, buckets ?? UPDATE_BUCKETS)
          : await source.runPage(id, buckets ?? UPDATE_BUCKETS);
    return reply.header('cache-control', 'no-store').send(data);
  });
  // One series between two steps, at a zoomed chart's resolution.
  app.get('/pages/api/runs/:id/series', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    if (!(await admitted(request, reply, [await source.repositoryOfRun(id)], `run ${id}`, false)))
      return reply;
    const { name, from, to, buckets } = parseInput(SeriesQuery, request.query, 'query');
    const data = await source.seriesRange(id, name, { from, to }, buckets);
    if (data === null) return reply.code(404).send({ error: `There is no run ${id}.` });
    return reply.header('cache-control', 'no-store').send(data);
  });
  // A running run's state and new points as they come (the page holds the rest).
  app.get('/pages/api/runs/:id/live', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    if (!(await admitted(request, reply, [await source.repositoryOfRun(id)], `run ${id}`, false)))
      return reply;
    const { after, buckets } = parseInput(LiveQuery, request.query, 'query');
    // An EventSource that reconnects says what it holds as Last-Event-ID.
    const lastEventId = request.headers['last-event-id'];
    const resumed = typeof lastEventId === 'string' ? parseStepsHeld(lastEventId) : null;
    reply.hijack();
    await streamRunUpdates({
      response: reply.raw,
      runId: id,
      held: resumed ?? after ?? new Map(),
      buckets,
      read: (held) => source.runUpdate(id, held, buckets),
      readWhole: () => source.runPage(id, buckets),
      changes,
      pollMs,
      signal: closing.signal,
      onError: (error) => request.log.error({ err: error, runId: id }, 'run updates stream failed'),
    });
    return reply;
  });
  app.get('/pages/api/groups/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    if (!(await admitted(request, reply, [await source.repositoryOfGroup(id)], `sweep ${id}`, false)))
      return reply;
    return reply.header('cache-control', 'no-store').send(await source.groupPage(id));
  });
  app.get('/pages/api/compare', async (request, reply) => {
    const { runs } = parseInput(CompareQuery, request.query, 'runs');
    const repositories = await Promise.all(runs.map((id) => source.repositoryOfRun(id)));
    if (!(await admitted(request, reply, repositories, 'such run', false))) return reply;
    return reply.header('cache-control', 'no-store').send(await source.comparePage(runs));
  });

  // The image a check run's summary embeds: one metric of a run against its baseline's.
  app.get('/pages/charts/runs/:id/curves.svg', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const { metric, baseline } = parseInput(ChartQuery, request.query, 'metric');
    const repository = await source.repositoryOfRun(id);
    const baselineRepository = baseline === undefined ? repository : await source.repositoryOfRun(baseline);
    // A baseline of another repository is as unknown as a missing one.
    const sameRepository = baselineRepository === repository ? repository : null;
    if (!(await admitted(request, reply, [repository, sameRepository], `run ${id}`, false))) return reply;
    const [data, baseData] = await Promise.all([
      source.runPage(id, SVG_BUCKETS),
      baseline === undefined ? null : source.runPage(baseline, SVG_BUCKETS),
    ]);
    const curves: SvgCurve[] = [];
    const own = data && Object.hasOwn(data.series, metric) ? data.series[metric] : undefined;
    if (own) curves.push({ label: 'this run', points: own.points, color: '#0072b2' });
    const base = baseData && Object.hasOwn(baseData.series, metric) ? baseData.series[metric] : undefined;
    if (base)
      curves.push({
        label: `baseline ${baseline!.slice(0, 12)}`,
        points: base.points,
        color: '#777777',
        dashed: true,
      });
    return reply
      .type('image/svg+xml')
      .header('cache-control', 'no-cache')
      .send(renderCurvesSvg({ title: metric, curves }));
  });

  // A file a stage produced, verified against its digest as it streams.
  // No HEAD route: Fastify's would open and stream the whole blob to answer headers.
  app.get('/pages/api/runs/:id/outs/:digest', { exposeHeadRoute: false }, async (request, reply) => {
    const { id, digest } = parseInput(OutParams, request.params, 'digest');
    if (!(await admitted(request, reply, [await source.repositoryOfRun(id)], `run ${id}`, false)))
      return reply;
    const out = await source.outBlob(id, digest);
    if (out === null) return reply.code(404).send({ error: `Run ${id} has no stored output file ${digest}` });
    const body = await out.open();
    reply.hijack();
    await sendVerifiedOut({
      response: reply.raw,
      out,
      digest,
      body,
      onError: (error) =>
        error instanceof OutCorruptError
          ? request.log.error(
              { runId: id, digest, path: out.path, found: error.found },
              'an output failed verification while downloading: its stored blob is corrupt; the download was aborted',
            )
          : request.log.warn({ err: error, runId: id, digest }, 'an output download failed'),
    });
    return reply;
  });

  // A stage's log from the cursor `after` (or the Last-Event-ID an EventSource resends
  // after a reconnect), in pieces, then its new lines as they arrive, until the run is over.
  app.get('/pages/api/runs/:id/logs/:stage', async (request, reply) => {
    const { id, stage } = parseInput(LogParams, request.params, 'stage');
    if (!(await admitted(request, reply, [await source.repositoryOfRun(id)], `run ${id}`, false)))
      return reply;
    const { after } = parseInput(LogQuery, request.query, 'after');
    const lastEventId = request.headers['last-event-id'];
    const start = parseLogCursor(typeof lastEventId === 'string' ? lastEventId : after) ?? {
      line: 0,
      position: 0,
    };
    const firstTicket = changes.take(id);
    const first = await source.stageLog(id, stage, start);
    if (first === null) {
      firstTicket.cancel();
      return reply.code(404).send({ error: `Run ${id} has no stage "${stage}"` });
    }
    reply.hijack();
    await streamStageLog({
      response: reply.raw,
      first,
      firstTicket,
      next: (cursor) => source.stageLog(id, stage, cursor),
      change: () => changes.take(id),
      pollMs,
      signal: closing.signal,
      onError: (error) => request.log.error({ err: error, runId: id, stage }, 'log stream failed'),
    });
    return reply;
  });
}
