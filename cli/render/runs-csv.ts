import { stringify } from 'csv-stringify/sync';
import type { ExperimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';

/**
 * `fluksio runs --csv`: the experiment table as RFC 4180 CSV (CRLF line ends, fields
 * quoted only when they must be) for a spreadsheet or pandas: whole ids and commits,
 * `dirty` as its own column, values as recorded (full precision), empty where a run has
 * none, the creation time in ISO 8601.
 */
export function renderRunsCsv(runs: readonly ExperimentRun[], columns: ExperimentColumns): string {
  const head = ['id', 'status', 'commit', 'dirty', ...columns.params, ...columns.metrics, 'created'];
  const rows = runs.map((run) => [
    run.id,
    run.status,
    run.commit ?? '',
    run.dirty,
    ...columns.params.map((name) => run.params[name] ?? ''),
    ...columns.metrics.map((name) => run.metrics[name] ?? ''),
    run.createdAt.toISOString(),
  ]);
  return stringify([head, ...rows], { record_delimiter: 'windows', cast: { boolean: String } });
}
