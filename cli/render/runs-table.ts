import type { ParamValue } from '../../schemas/key-inputs.js';
import { formatDuration, formatParams, short } from '../../schemas/format.js';
import { fitTable } from './fit-table.js';

/** What a line of `fluksio runs` shows of a run, local or remote. */
export interface RunsTableRow {
  id: string;
  status: string;
  commit: string | null;
  dirty?: boolean;
  params: Readonly<Record<string, ParamValue>>;
  createdAt: Date;
  durationMs: number | null;
}

/**
 * The runs as `fluksio runs` prints them, within `width`. On a terminal (a finite width)
 * the short id, a unique prefix that every command takes, leaves room for the params;
 * a pipe gets whole ids. Dirty runs are starred, and the star is explained under the table.
 */
export function renderRunsTable(runs: readonly RunsTableRow[], width: number): string {
  const rows = runs.map((run) => [
    Number.isFinite(width) ? short(run.id, 12) : run.id,
    run.status,
    `${short(run.commit, 10)}${run.dirty ? '*' : ''}`,
    formatParams(run.params),
    run.createdAt.toISOString().replace('T', ' ').slice(0, 16),
    formatDuration(run.durationMs),
  ]);
  const table = fitTable({
    head: ['run', 'status', 'commit', 'params', 'started', 'time'],
    rows,
    width,
    droppable: ['started', 'time', 'commit'],
  });
  return `${table}\n${runs.some((run) => run.dirty) ? '* dirty: uncommitted changes\n' : ''}`;
}
