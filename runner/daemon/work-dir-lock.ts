import path from 'node:path';
import { FLOCK_PATHS, findFlock } from '../../host/find-flock.js';
import { lockPidFile } from '../../host/lock-pid-file.js';
import { holderName, PidFileHeldError } from '../../host/pid-file-held-error.js';

/** The lock file in a runner's work directory: it holds the pid of the runner that has it. */
export const WORK_DIR_LOCK_FILE = 'runner.pid';

/** A work directory held by this process until `release()` (or until it dies). */
export interface WorkDirLock {
  /** The lock file, which holds this process's pid while the lock is held. */
  file: string;
  release(): Promise<void>;
}

/**
 * Locks a runner's work directory with flock(2) on `runner.pid`, the pid of the holder
 * written in it (lockPidFile), so a runner killed hard (kill -9, the OOM killer) leaves
 * nothing to wait for: the next one starts at once, where proper-lockfile's lock stayed for
 * its 30 s staleness. A runner never waits for another: two on one work directory are a
 * mistake of whoever started them, refused naming the holder's pid. The runner runs on Linux
 * alone, so util-linux is required rather than worked around.
 */
export async function lockWorkDir(workDir: string): Promise<WorkDirLock> {
  const file = path.join(workDir, WORK_DIR_LOCK_FILE);
  const flock = await findFlock();
  if (flock === null) {
    throw new Error(
      `The runner locks its work directory with util-linux's flock(1), found at none of ${FLOCK_PATHS.join(', ')}: install util-linux`,
    );
  }
  try {
    const lock = await lockPidFile(file, { flock, waitMs: 0 });
    return { file, release: () => lock.release() };
  } catch (error) {
    if (!(error instanceof PidFileHeldError)) throw error;
    throw new Error(
      `Another runner (${holderName(error.holderPid)}) is using the work directory ` +
        `${workDir}; give this one its own with --work-dir`,
      { cause: error },
    );
  }
}
