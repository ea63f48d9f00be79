import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { BlobDigest } from '../../schemas/blob-digest.js';
import { parseInput } from '../http/parse-input.js';
import { OutCorruptError } from './out-corrupt-error.js';
import type { PageAdmission } from './page-admission.js';
import { CompareQuery, Id, IdParams } from './page-params.js';
import type { PageSource } from './page-source.js';
import { parseStepsHeld } from './parse-steps-held.js';
import type { RunChanges } from './run-changes.js';
import { RUN_LIST_PAGE_SIZE, RunListQuery, runListFilter } from './run-list-query.js';
import { sendVerifiedOut } from './send-verified-out.js';
import { streamRunUpdates } from './stream-run-updates.js';
import { parseLogCursor, streamStageLog } from './stream-stage-log.js';

/** What the page API answers from, and what its live streams wait on. */
export interface PageApiRoutesOptions {
  source: PageSource;
  admitted: PageAdmission;
  /** What tells a live stream that a run changed. */
  changes: RunChanges;
  /** The longest a live stream waits before it looks again without being told. */
  pollMs: number;
  /** Aborted when the server closes: it ends the live streams. */
  signal: AbortSignal;
}

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
/** A run's update asked for without a width is cut down to a page's chart's (pages' CHART_WIDTH). */
const UPDATE_BUCKETS = 560;
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
const RunQuery = z.object({ buckets: Buckets.optional(), after: StepsHeld.optional() }).loose();

/**
 * The JSON the run pages are drawn from (`/pages/api/…`): a repository's runs, a run (or
 * its points since what a page holds), a series between two steps, a sweep, a comparison;
 * a running run's updates and a stage's log as server-sent events; a stage's output file,
 * verified as it streams. Every answer first asks `admitted` about the run's repository.
 */
export function pageApiRoutes(app: FastifyInstance, options: PageApiRoutesOptions): void {
  const { source, admitted, changes, pollMs, signal } = options;

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
      signal,
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
      signal,
      onError: (error) => request.log.error({ err: error, runId: id, stage }, 'log stream failed'),
    });
    return reply;
  });
}
