import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as tables from '../../schemas/tables/index.js';
import { preparingStatements } from '../../store/db/preparing-statements.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

/**
 * A drizzle database on one connection of `url`, and how many statements with parameters
 * are prepared on that connection (postgres.js prepares a few of its own, without).
 */
function oneConnection(url: string) {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  const db = drizzle({ client: preparingStatements(client), schema: tables });
  const prepared = async (): Promise<number> => {
    const [row] = await client.unsafe<{ n: number }[]>(
      "select count(*)::int as n from pg_prepared_statements where statement like '%$1%'",
    );
    return row?.n ?? 0;
  };
  return { db, prepared, close: () => client.end() };
}

describe('preparingStatements', () => {
  test('a query with parameters is prepared once and reused, in a transaction too', async () => {
    const { db, prepared, close } = oneConnection(database.url);
    try {
      for (let value = 0; value < 5; value += 1) {
        expect(await db.execute(sql`select ${value}::int as v`)).toEqual([{ v: value }]);
      }
      await db.transaction(async (tx) => {
        await tx.execute(sql`select ${1}::int + 1 as v`);
      });
      expect(await prepared()).toBe(2);
    } finally {
      await close();
    }
  });

  test('texts that vary with input (an IN list of any length) prepare at most 250 statements per connection', async () => {
    const { db, prepared, close } = oneConnection(database.url);
    try {
      for (let length = 1; length <= 600; length += 1) {
        const values = Array.from({ length }, (_, index) => index);
        const [row] = await db.execute<{ n: number }>(
          sql`select count(*)::int as n from unnest(array[${sql.join(
            values.map((value) => sql`${value}::int`),
            sql`, `,
          )}]) as v`,
        );
        expect(row?.n).toBe(length);
      }
      expect(await prepared()).toBeLessThanOrEqual(250);
      expect(await prepared()).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });

  test('with prepare=false in the URL (a pooler in transaction mode) nothing is prepared', async () => {
    const { db, prepared, close } = oneConnection(`${database.url}?prepare=false`);
    try {
      await db.execute(sql`select ${1}::int as v`);
      await db.transaction(async (tx) => tx.execute(sql`select ${2}::int as v`));
      expect(await prepared()).toBe(0);
    } finally {
      await close();
    }
  });
});
