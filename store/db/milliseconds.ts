import { sql, type SQL } from 'drizzle-orm';

/** An interval of `ms` milliseconds, for arithmetic on the database's clock (`now() + …`). */
export function milliseconds(ms: number): SQL {
  return sql`(${ms}::double precision * interval '1 millisecond')`;
}
