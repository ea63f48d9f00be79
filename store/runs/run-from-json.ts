import { getTableColumns } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';

let timestampColumns: string[] | null = null;

/**
 * A run row written as JSON (a local journal's `run.created`, the local index's baseline)
 * read back as a row: its timestamp columns, whichever the runs table has, become Dates.
 */
export function runFromJson(json: Readonly<Record<string, unknown>>): Run {
  timestampColumns ??= Object.entries(getTableColumns(runs))
    .filter(([, column]) => column.columnType === 'PgTimestamp')
    .map(([name]) => name);
  const row: Record<string, unknown> = { ...json };
  for (const name of timestampColumns) {
    const value = row[name];
    if (typeof value === 'string') row[name] = new Date(value);
  }
  return row as Run;
}
