import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { buildRunReport } from '../schemas/run-report.js';
import type { Run } from '../schemas/tables/runs.js';
import type { RunDetail } from '../store/get-run-detail.js';

/**
 * `GET /api/v1/runs/:id`: the run as `fluksio run --json` prints it, plus its repository,
 * attempt, labels and runner. The diff is against the baseline fixed when the run
 * finished (null before, or when there was none), better and worse by the metric goals
 * the runner read from the pipeline at the run's commit.
 */
export function toRemoteRunReport(detail: RunDetail, baseline: Run | null): RemoteRunReport {
  const { run } = detail;
  return {
    ...buildRunReport(detail, baseline, run.metricGoals),
    repository: run.repository,
    attempt: run.attempt,
    labels: run.labels,
    runner: run.runnerName,
    sandbox: run.sandbox,
  };
}
