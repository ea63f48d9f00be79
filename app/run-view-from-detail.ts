import type { RunLinks, RunView } from '../present/run-view.js';
import { runViewFromReport } from '../present/run-view-from-report.js';
import type { Run } from '../schemas/tables/runs.js';
import { tracebackTexts } from '../schemas/traceback.js';
import type { RunDetail } from '../store/get-run-detail.js';
import { toRemoteRunReport } from './to-remote-run-report.js';

/** Said when the control plane found no run to compare with. */
const NO_BASELINE =
  'no earlier successful run of this pipeline was found on the base commit or its ancestors, so there is nothing to compare with.';

/**
 * A run as people read it, from the control plane's rows, through the report its API
 * answers (one model, however the run is reached): its metrics so far, compared with
 * `baseline` (DESIGN §7) by the goals the run was queued with, the tracebacks in the log
 * tails of its failed stages, and `fluksio show … --url serverUrl` as the way to the
 * whole run.
 */
export function runViewFromDetail(
  detail: RunDetail,
  {
    baseline,
    serverUrl,
    detailsUrl,
    chart = null,
  }: {
    baseline: { run: Run; label: string } | null;
    serverUrl: string;
    /** The run's page (a signed link); by default its JSON on the control plane. */
    detailsUrl?: string;
    chart?: RunLinks['chart'];
  },
): RunView {
  const { run } = detail;
  const server = serverUrl.replace(/\/+$/, '');
  const report = toRemoteRunReport(
    { ...detail, run: { ...run, metrics: metricsSoFar(detail) } },
    baseline?.run ?? null,
  );
  const view = runViewFromReport(report, {
    series: detail.series,
    logTails: Object.fromEntries(detail.stages.map((stage) => [stage.name, stage.logTail])),
    // The annotations carry the lines; the summary shows the tracebacks of the stages that failed.
    tracebacks: detail.stages
      .filter((stage) => stage.status === 'failed' || stage.status === 'timed_out')
      .flatMap((stage) =>
        tracebackTexts(stage.logTail.split('\n')).map((text) => ({ stage: stage.name, text })),
      ),
    commitNote: null,
    baselineLabel: baseline?.label ?? '',
    noBaseline: NO_BASELINE,
    goals: run.metricGoals,
    links: {
      showCommand: `fluksio show ${run.id} --url ${server}`,
      detailsUrl: detailsUrl ?? `${server}/api/v1/runs/${encodeURIComponent(run.id)}`,
      detailsLabel: detailsUrl ? "the run's page" : 'the run on the control plane',
      chart,
    },
  });
  // The report says when the run was made; one queued again after its runner vanished waits since then.
  return { ...view, times: { ...view.times, queuedAt: run.queuedAt.toISOString() } };
}

/** The final metrics once the run finished; until then those its stages reported so far. */
function metricsSoFar({ run, stages }: RunDetail): Record<string, number> {
  return Object.assign({}, ...stages.map((stage) => stage.metrics), run.metrics) as Record<string, number>;
}
