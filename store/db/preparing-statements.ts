import type { Sql } from 'postgres';

/**
 * `client` with every parameterised query drizzle sends prepared (a named statement parsed
 * and planned once per connection, then only bound and executed) instead of parsed and
 * planned again on each call, as postgres.js does for `unsafe` queries by default. An
 * insert into `runs` — many columns, defaults and indexes — is planned in about a
 * millisecond, more than its commit. Transactions' connections are prepared alike.
 * Statements live as long as their connection (postgres.js recycles connections within
 * an hour), so queries whose text varies (an IN list's length) are bounded by that.
 */
export function preparingStatements<Client extends Sql>(client: Client): Client {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        const unsafe: Sql['unsafe'] = (query, parameters, options) =>
          target.unsafe(query, parameters, {
            ...options,
            prepare: options?.prepare === true || (parameters?.length ?? 0) > 0,
          });
        return unsafe;
      }
      if (property === 'begin') {
        return (...args: unknown[]) => {
          const callback = args.at(-1) as (transaction: Sql) => unknown;
          const rest = args.slice(0, -1);
          return (target.begin as (...beginArgs: unknown[]) => unknown)(...rest, (transaction: Sql) =>
            callback(preparingStatements(transaction)),
          );
        };
      }
      if (property === 'savepoint') {
        return (...args: unknown[]) => {
          const callback = args.at(-1) as (transaction: Sql) => unknown;
          const rest = args.slice(0, -1);
          const savepoint = (target as unknown as { savepoint: (...a: unknown[]) => unknown }).savepoint;
          return savepoint.call(target, ...rest, (transaction: Sql) =>
            callback(preparingStatements(transaction)),
          );
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
