import type { Sql } from 'postgres';

/** The most query texts prepared: postgres.js keeps each on every connection until it is recycled. */
const MOST_PREPARED = 250;
/**
 * A longer text (a long IN list, many OR terms) is not worth a statement kept per
 * connection; the longest hot one, the submit's insert that may lease the run, is ~9,000.
 */
const LONGEST_PREPARED = 16_000;

/**
 * `client` with drizzle's parameterised queries prepared (a named statement parsed and
 * planned once per connection, then only bound and executed) instead of parsed and planned
 * again on each call, as postgres.js does for `unsafe` queries by default: an insert into
 * `runs` — many columns, defaults and indexes — is planned in about a millisecond, more
 * than its commit. Transactions' connections are prepared alike.
 *
 * postgres.js keeps a prepared statement on its connection, in the server's memory too,
 * until the connection is recycled (within an hour). Texts that vary with a request's input
 * (an IN list's length, a chart's bucket count) would grow that without bound, so only the
 * first 250 distinct texts of at most 16,000 characters are prepared; the hot paths (claims,
 * heartbeats, events, submits) are among the first seen, and every other text runs
 * unprepared as before. With `prepare=false` in DATABASE_URL (a pooler in transaction mode,
 * where named statements do not survive), nothing is prepared.
 */
export function preparingStatements<Client extends Sql>(client: Client): Client {
  if (client.options.prepare === false) return client;
  return withPrepared(client, new Set());
}

function withPrepared<Client extends Sql>(client: Client, prepared: Set<string>): Client {
  const mayPrepare = (query: string): boolean => {
    if (prepared.has(query)) return true;
    if (prepared.size >= MOST_PREPARED || query.length > LONGEST_PREPARED) return false;
    prepared.add(query);
    return true;
  };
  // A transaction's callback gets its connection's client, prepared alike.
  const inTransaction =
    (start: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) => {
      const callback = args.at(-1) as (transaction: Sql) => unknown;
      return start(...args.slice(0, -1), (transaction: Sql) => callback(withPrepared(transaction, prepared)));
    };
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        const unsafe: Sql['unsafe'] = (query, parameters, options) =>
          target.unsafe(query, parameters, {
            ...options,
            prepare: options?.prepare === true || ((parameters?.length ?? 0) > 0 && mayPrepare(query)),
          });
        return unsafe;
      }
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      return property === 'begin' || property === 'savepoint' ? inTransaction(bound) : bound;
    },
  });
}
