import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { buildRunReport } from '../schemas/run-report.js';
import type { Run } from '../schemas/tables/runs.js';
import type { RunDetail } from '../store/get-run-detail.js';

/**
 * `GET /api/v1/runs/:id`: the run as `fluksio run --json` prints it, plus its repository,
 * attempt, labels and runner. The diff is against `baseline` (null: none, the diff lists
 * the run's own metrics), ✅/❌ by the goals the run was queued with.
 */
export function toRemoteRunReport(detail: RunDetail, baseline: Run | null = null): RemoteRunReport {
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
