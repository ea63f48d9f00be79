import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * What a log line says of a failure: the error, except that a failed database query is
 * logged as its statement and the database's own error, without the parameters drizzle
 * puts in its message (a lease, a run's params, a payload of megabytes).
 */
export function loggableError(error: unknown): { err: unknown; query?: string } {
  if (error instanceof DrizzleQueryError)
    return { err: error.cause ?? 'the query failed', query: error.query };
  return { err: error };
}
