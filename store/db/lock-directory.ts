import { lock } from 'proper-lockfile';

/**
 * Takes the lock of a local store's directory for this process, waiting up to `waitMs`;
 * fails with a sentence saying why. A process that dies holding it leaves it stale after
 * 30 s. The staleness is generous because a lock holder may keep its event loop busy (PGlite
 * runs queries on this thread, a stage's output is parsed here), and a live lock must not look
 * abandoned. Resolves to what releases it.
 */
export async function lockDirectory(dir: string, waitMs: number): Promise<() => Promise<void>> {
  try {
    return await lock(dir, {
      realpath: false,
      stale: 30_000,
      update: 5_000,
      retries: { retries: Math.max(0, Math.ceil(waitMs / 200)), minTimeout: 200, maxTimeout: 200, factor: 1 },
      // Compromised means another process judged us dead and took the directory; there is
      // nothing sound left to do from a timer callback, and throwing there would crash.
      onCompromised: () => {},
    });
  } catch (error) {
    throw new Error(
      `The local store ${dir} is in use by another fluksio process; wait for it to finish and try again`,
      { cause: error },
    );
  }
}
