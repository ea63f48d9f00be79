import type { Sql } from 'postgres';
import type { KeyedLock } from './keyed-lock.js';

/**
 * A KeyedLock shared by every process on one PostgreSQL database: a transaction-scoped
 * advisory lock on the key's 64-bit hash, held by an open transaction of `client` while
 * the task runs. PostgreSQL lets go of it when the transaction ends, and when the
 * holder's connection or process dies, so a control plane killed mid-task leaves nothing
 * held. `client` should be a pool of its own: each holder keeps one of its connections
 * idle in a transaction, which must not starve the queries the task itself makes.
 */
export function postgresAdvisoryLock(client: Sql): KeyedLock {
  return {
    async hold<T>(key: string, task: () => Promise<T>): Promise<T> {
      let result: T | undefined;
      await client.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
        result = await task();
      });
      return result as T;
    },
  };
}
