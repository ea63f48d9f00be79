import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CancelRunRequest } from '../../schemas/protocol/cancel-run.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { RunReportQuery } from '../../schemas/protocol/run-report-query.js';
import type { RunMetricsReply } from '../../schemas/protocol/run-metrics-reply.js';
import type { StageLogReply } from '../../schemas/protocol/stage-log-reply.js';
import type { ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import type { Run } from '../../schemas/tables/runs.js';
import { findBaseline } from '../../store/runs/find-baseline.js';
import { getRunDetail, type RunDetail } from '../../store/runs/get-run-detail.js';
import { RunListQuery, type RunListReply } from '../../schemas/protocol/run-list.js';
import { getBaselineRun } from '../../store/runs/get-baseline-run.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { listVisibleRuns } from '../../store/runs/list-visible-runs.js';
import { requestCancel } from '../../store/runs/request-cancel.js';
import { authenticateSubmitter, tokenReaches } from '../http/authenticate-submitter.js';
import { HttpError } from '../http/http-error.js';
import { loadRun, noSuchRun } from '../http/load-run.js';
import { parseInput } from '../http/parse-input.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdParams } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';
import { toRemoteRunReport } from '../to-remote-run-report.js';

const LogParams = RunIdParams.extend({ stage: z.string().min(1).max(200) });

/**
 * What a submitter reads about a run, and cancel: `GET /api/v1/runs` (the newest runs of
 * the token's repositories, optionally by id prefix, commits, branch and state), `GET /api/v1/runs/:id` (RemoteRunReport,
 * compared with the baseline fixed when the run finished or, before that, with one among the
 * commits recorded on the run, else the `baseline-commits` the caller lists),
 * `/metrics` (the streamed series), `/logs/:stage` (a stage's whole log) and `POST
 * /api/v1/runs/:id/cancel`. A run of a repository the token does not reach is answered as
 * unknown (404), so a token learns nothing about other repositories' runs.
 */
export function runRoutes(app: FastifyInstance, context: RouteContext): void {
  const { db } = context;
  const readAuth = requestAuth((request) => authenticateSubmitter(db, request, 'read'));
  const submitAuth = requestAuth((request) => authenticateSubmitter(db, request, 'submit'));

  async function visibleRun(
    request: FastifyRequest,
    scope: 'read' | 'submit',
  ): Promise<{ run: Run; token: ApiTokenRow }> {
    const token = (scope === 'read' ? readAuth : submitAuth).of(request);
    const { id } = parseInput(RunIdParams, request.params, 'id');
    const run = await loadRun(db, id);
    if (!tokenReaches(token, run.repository)) throw noSuchRun(id);
    return { run, token };
  }

  async function detailOf(run: Run): Promise<RunDetail> {
    const detail = await getRunDetail({ db, runId: run.id });
    if (!detail) throw noSuchRun(run.id);
    return detail;
  }

  /**
   * The run's report against the baseline fixed when it finished; before that (or when the
   * run has none fixed), against the run fixRunBaseline would choose among the commits
   * recorded on the run (its submitter's, or the GitHub App's lookup, as its check run
   * shows), else among `commits` the caller lists.
   */
  async function reportOf(run: Run, listed?: readonly string[]): Promise<RemoteRunReport> {
    const detail = await detailOf(run);
    const fixed = await getBaselineRun({ db, run: detail.run });
    const commits = detail.run.baselineCommits ?? listed;
    const baseline =
      fixed ??
      (commits && !detail.run.baselineFixed
        ? await findBaseline({
            db,
            repository: run.repository,
            pipelinePath: run.pipelinePath,
            commits: [...commits],
            excludeRunId: run.id,
            // As fixRunBaseline will choose at the end: never a member of its own sweep.
            excludeGroupId: run.groupId,
            paramsDigest: run.paramsDigest,
          })
        : null);
    return toRemoteRunReport(detail, baseline);
  }

  app.get('/api/v1/runs', { onRequest: readAuth.onRequest }, async (request): Promise<RunListReply> => {
    const token = readAuth.of(request);
    const query = parseInput(RunListQuery, request.query ?? {}, 'query');
    // A repository the token does not reach lists nothing, as one without runs would.
    const repositories =
      query.repository === undefined
        ? token.repositories
        : token.repositories.filter((each) => each === query.repository);
    const found = await listVisibleRuns({
      db,
      repositories,
      pipelinePath: query.pipeline,
      prefix: query.prefix,
      commits: query.commit,
      branch: query.branch,
      status: query.status,
      limit: query.limit,
    });
    return {
      runs: found.map((run) => ({
        id: run.id,
        repository: run.repository,
        pipelinePath: run.pipelinePath,
        commit: run.commit,
        branch: run.branch,
        dirty: run.dirty,
        selection: run.selection,
        params: run.params,
        paramsDigest: run.paramsDigest,
        status: run.status,
        groupId: run.groupId,
        createdAt: run.createdAt.toISOString(),
        durationMs: run.durationMs,
        metrics: run.metrics,
      })),
    };
  });

  app.get(
    '/api/v1/runs/:id',
    { onRequest: readAuth.onRequest },
    async (request): Promise<RemoteRunReport> => {
      const { run } = await visibleRun(request, 'read');
      const query = parseInput(RunReportQuery, request.query ?? {}, 'query');
      return reportOf(run, query['baseline-commits']);
    },
  );

  app.get(
    '/api/v1/runs/:id/metrics',
    { onRequest: readAuth.onRequest },
    async (request): Promise<RunMetricsReply> => {
      return { series: (await detailOf((await visibleRun(request, 'read')).run)).series };
    },
  );

  app.get(
    '/api/v1/runs/:id/logs/:stage',
    { onRequest: readAuth.onRequest },
    async (request): Promise<StageLogReply> => {
      const { run } = await visibleRun(request, 'read');
      const { stage } = parseInput(LogParams, request.params, 'stage');
      const lines = await getStageLog({ db, runId: run.id, stage });
      if (lines === null) throw new HttpError(404, `Run ${run.id} has no stage "${stage}"`, 'stage');
      return { stage, lines };
    },
  );

  app.post(
    '/api/v1/runs/:id/cancel',
    { onRequest: submitAuth.onRequest },
    async (request): Promise<RemoteRunReport> => {
      const { run, token } = await visibleRun(request, 'submit');
      const { reason } = parseInput(CancelRunRequest, request.body ?? {}, 'body');
      const cancelled = await requestCancel({
        db,
        runId: run.id,
        reason: reason ?? `Cancelled by ${token.name}`,
      });
      if (!cancelled) throw noSuchRun(run.id);
      request.log.info({ runId: run.id, status: cancelled.status }, 'run cancel requested');
      context.onRunChanged?.(run.id);
      return reportOf(cancelled);
    },
  );
}
