import type { RunReport } from '../schemas/run-report.js';
import { formatParams } from '../core/text/format.js';

/** The step's outputs, as action.yml declares them (all strings: JSON where structured). */
export interface ActionOutputs {
  /** The run's id; a sweep's group id. */
  'run-id': string;
  /** The run's status; for a sweep `succeeded` when every run did, else the first other status. */
  status: string;
  /** The run's metrics as a JSON object; for a sweep, each run's metrics by run id. */
  metrics: string;
  /** The summary as markdown, as written to the step summary. */
  summary: string;
  /** Every run as a JSON array of `{id, status, params, metrics, reason}`, in grid order. */
  runs: string;
}

/** What a mode hands back to main: outputs to set, and why the step fails (null: it does not). */
export interface ActionResult {
  outputs: ActionOutputs;
  failure: string | null;
}

/** Outputs and failure of a set of runs (one, or a sweep's grid) in the state `reports` give. */
export function actionResult(reports: RunReport[], groupId: string | null, summary: string): ActionResult {
  const runs = reports.map((report) => ({
    id: report.run.id,
    status: report.run.status,
    params: report.run.params,
    metrics: report.metrics,
    reason: report.run.reason,
  }));
  const first = reports[0];
  const unsuccessful = reports.filter((report) => report.run.status !== 'succeeded');
  const status = groupId ? (unsuccessful[0]?.run.status ?? 'succeeded') : (first?.run.status ?? 'cancelled');
  const metrics = groupId
    ? Object.fromEntries(reports.map((report) => [report.run.id, report.metrics]))
    : (first?.metrics ?? {});
  const failing = unsuccessful.filter(
    (report) => report.run.status !== 'queued' && report.run.status !== 'running',
  );
  const failure =
    reports.length === 0
      ? 'The workflow was cancelled before any run started'
      : failing.length === 0
        ? null
        : failing.map(failureSentence).join('\n');
  return {
    outputs: {
      'run-id': groupId ?? first?.run.id ?? '',
      status,
      metrics: JSON.stringify(metrics),
      summary,
      runs: JSON.stringify(runs),
    },
    failure,
  };
}

/** `Run 01J… (lr=0.1) failed: Stage train failed: exited with code 1: ZeroDivisionError: division by zero`. */
function failureSentence(report: RunReport): string {
  const { run } = report;
  const params = run.groupId ? ` (${formatParams(run.params)})` : '';
  return `Run ${run.id}${params} ${run.status.replace('_', ' ')}${run.reason ? `: ${run.reason}` : ''}`;
}
