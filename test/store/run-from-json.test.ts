import { getTableColumns } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { runs } from '../../schemas/tables/runs.js';
import { RUN_TIMESTAMP_COLUMNS, runFromJson } from '../../store/run-from-json.js';

test('the timestamp columns runFromJson revives are exactly the runs table’s', () => {
  const fromTable = Object.entries(getTableColumns(runs))
    .filter(([, column]) => column.columnType === 'PgTimestamp')
    .map(([name]) => name)
    .sort();
  expect([...RUN_TIMESTAMP_COLUMNS].sort()).toEqual(fromTable);
});

test('a run row read back from JSON has Dates where the table has timestamps, and nothing else changed', () => {
  const row = runFromJson({
    id: 'r1',
    createdAt: '2026-12-01T10:00:00.000Z',
    startedAt: null,
    status: 'running',
  });
  expect(row.createdAt).toEqual(new Date('2026-12-01T10:00:00.000Z'));
  expect(row.startedAt).toBeNull();
  expect(row.status).toBe('running');
});
