import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findFlock } from '../host/find-flock.js';
import { lockPidFile } from '../host/lock-pid-file.js';

/** `<journalDir>/<run>.lock`: held by the `fluksio run` process recording that run. */
export function runProcessLockFileOf(journalDir: string, runId: string): string {
  return join(journalDir, `${runId}.lock`);
}

/** What a run's process lock releases: the file goes first, so no reader mistakes a finished run for a dead one. */
export interface RunProcessLock {
  release(): Promise<void>;
}

/**
 * Takes the lock that says "the process recording this run is alive": flock(2) on
 * `<journalDir>/<run>.lock`, holding this process's pid. The kernel drops it when the
 * process dies however it dies (kill -9, the OOM killer, a power cut), so a reader that
 * gets the lock knows the run's recorder is gone, without guessing from a timeout or a
 * pid that may have been reused (endDeadRuns). Taken before the journal exists and
 * released after its last line, so a journal without its end whose lock is free is one
 * whose process died. A journal without a lock file is a run of a fluksio from before this
 * lock (or of one where flock(1) is missing, which takes none): nothing can be told of it.
 */
export async function lockRunProcess(journalDir: string, runId: string): Promise<RunProcessLock> {
  const flock = await findFlock();
  if (flock === null) return { release: async () => {} };
  const file = runProcessLockFileOf(journalDir, runId);
  // A reader holds a dead run's lock for a moment only; a new run's lock is never theirs to take.
  const held = await lockPidFile(file, { flock, waitMs: 10_000 });
  return {
    async release() {
      await rm(file, { force: true });
      await held.release();
    },
  };
}
