import { sql, type Placeholder, type SQL } from 'drizzle-orm';

/**
 * An interval of `ms` milliseconds, for arithmetic on the database's clock (`now() + …`);
 * `ms` may be a prepared statement's placeholder.
 */
export function milliseconds(ms: number | Placeholder): SQL {
  return sql`(${ms}::double precision * interval '1 millisecond')`;
}
