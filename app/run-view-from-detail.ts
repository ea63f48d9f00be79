import type { RunView } from '../present/run-view.js';
import { hasStarted } from '../present/has-started.js';
import { diffMetrics } from '../schemas/metric-diff.js';
import type { Run } from '../schemas/tables/runs.js';
import { tracebackTexts } from '../schemas/traceback.js';
import type { RunDetail } from '../store/get-run-detail.js';

/** Said when the control plane found no run to compare with. */
const NO_BASELINE =
  'no earlier successful run of this pipeline was found on the base commit or its ancestors, so there is nothing to compare with.';

/**
 * A run as people read it, from the control plane's rows: its metrics so far, compared
 * with `baseline` (DESIGN §7) by the goals the run was queued with, the tracebacks in the
 * log tails of its failed stages, and `fluksio show … --url serverUrl` as the way to the
 * whole run.
 */
export function runViewFromDetail(
  detail: RunDetail,
  { baseline, serverUrl }: { baseline: { run: Run; label: string } | null; serverUrl: string },
): RunView {
  const { run } = detail;
  const server = serverUrl.replace(/\/+$/, '');
  const metrics = metricsSoFar(detail);
  return {
    id: run.id,
    attempt: run.attempt,
    pipelinePath: run.pipelinePath,
    status: run.status,
    reason: run.statusReason,
    stamp: {
      commit: run.commit,
      commitNote: null,
      dirty: run.dirty,
      dirtyReasons: run.dirtyReasons,
      codeDigest: run.codeDigest,
      params: run.params,
      paramsDigest: run.paramsDigest,
      envDigest: run.envDigest,
    },
    placement: { runner: run.runnerName, sandbox: run.sandbox },
    times: {
      queuedAt: run.queuedAt.toISOString(),
      startedAt: run.startedAt?.toISOString() ?? null,
      finishedAt: run.finishedAt?.toISOString() ?? null,
      durationMs: run.durationMs,
    },
    stages: detail.stages.map((stage) => ({
      name: stage.name,
      status: stage.status,
      durationMs: hasStarted(stage.status) ? stage.durationMs : null,
      cacheKey: stage.cacheKey,
      cachedFrom: stage.cachedFrom,
      exitCode: stage.exitCode,
      error: stage.error,
      reasons: stage.reasons,
      notes: stage.notes,
      logTail: stage.logTail,
      // The annotations carry the lines; the summary shows the tracebacks of the stages that failed.
      tracebacks:
        stage.status === 'failed' || stage.status === 'timed_out'
          ? tracebackTexts(stage.logTail.split('\n'))
          : [],
    })),
    metrics,
    metricDiff: {
      baseline: baseline ? { runId: baseline.run.id, label: baseline.label } : null,
      noBaseline: NO_BASELINE,
      rows: diffMetrics(metrics, baseline?.run.metrics ?? null, run.metricGoals),
      goals: run.metricGoals,
    },
    series: detail.series,
    annotations: detail.annotations,
    links: {
      showCommand: `fluksio show ${run.id} --url ${server}`,
      detailsUrl: `${server}/api/v1/runs/${encodeURIComponent(run.id)}`,
      detailsLabel: 'the run on the control plane',
    },
  };
}

/** The final metrics once the run finished; until then those its stages reported so far. */
function metricsSoFar({ run, stages }: RunDetail): Record<string, number> {
  return Object.assign({}, ...stages.map((stage) => stage.metrics), run.metrics) as Record<string, number>;
}
