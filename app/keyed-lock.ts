/**
 * Mutual exclusion by name across every control plane process sharing the database: one
 * holder of a key at a time, others wait their turn. Made by openControlPlaneDatabase
 * (a PostgreSQL advisory lock, or an in-process lock for the single-node PGlite).
 */
export interface KeyedLock {
  /** Runs `task` while holding `key`, and lets go of it when the task settles. */
  hold<T>(key: string, task: () => Promise<T>): Promise<T>;
}

/**
 * A KeyedLock within one process, for the embedded PGlite database: it is one process's
 * alone, and its single connection makes an advisory lock reentrant, so no lock at all.
 */
export function inProcessLock(): KeyedLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    hold<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.catch(() => undefined);
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
