import type { Run } from '../schemas/tables/runs.js';

/**
 * The runs table's timestamp columns, which JSON carries as ISO strings. Listed rather
 * than asked of drizzle's table object: `fluksio run` reads run rows from JSON on every
 * cached run, and loading drizzle for this list cost it more than the rest of the read.
 * test/store/run-from-json.test.ts pins the list to the table's.
 */
export const RUN_TIMESTAMP_COLUMNS = [
  'createdAt',
  'startedAt',
  'finishedAt',
  'queuedAt',
  'leaseExpiresAt',
  'claimedAt',
] as const satisfies readonly (keyof Run)[];

/**
 * A run row written as JSON (a local journal's `run.created`, the local index's baseline)
 * read back as a row: its timestamp columns become Dates.
 */
export function runFromJson(json: Readonly<Record<string, unknown>>): Run {
  const row: Record<string, unknown> = { ...json };
  for (const name of RUN_TIMESTAMP_COLUMNS) {
    const value = row[name];
    if (typeof value === 'string') row[name] = new Date(value);
  }
  return row as Run;
}
