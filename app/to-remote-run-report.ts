import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { buildRunReport } from '../schemas/run-report.js';
import type { RunDetail } from '../store/runs/get-run-detail.js';

/**
 * `GET /api/v1/runs/:id`: the run as `fluksio run --json` prints it, plus its repository,
 * attempt, labels and runner. The control plane has neither the pipeline's metric goals
 * nor the repository's history, so there is no baseline or ✅/❌ here yet: the diff lists
 * the run's own metrics.
 */
export function toRemoteRunReport(detail: RunDetail): RemoteRunReport {
  const { run } = detail;
  return {
    ...buildRunReport(detail, null, {}),
    repository: run.repository,
    attempt: run.attempt,
    labels: run.labels,
    runner: run.runnerName,
    sandbox: run.sandbox,
  };
}
