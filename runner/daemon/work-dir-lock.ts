import { spawn } from 'node:child_process';
import { access, constants, open, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The lock file in a runner's work directory: it holds the pid of the runner that has it. */
export const WORK_DIR_LOCK_FILE = 'runner.pid';

/** Where util-linux installs flock(1); a runner's PATH may hold git alone, so it is found by path. */
const FLOCK_PATHS = ['/usr/bin/flock', '/bin/flock'];

/** flock(1)'s exit code when `--nonblock` finds the lock held, chosen to differ from its errors. */
const HELD_EXIT_CODE = 75;

/** A work directory held by this process until `release()` (or until it dies). */
export interface WorkDirLock {
  /** The lock file, which holds this process's pid while the lock is held. */
  file: string;
  release(): Promise<void>;
}

/**
 * Locks a runner's work directory with flock(2) on `runner.pid`, the pid of the holder
 * written in it. The kernel drops an flock when the last descriptor of its open file
 * closes, so a runner killed hard (kill -9, the OOM killer) leaves nothing to wait for:
 * the next one starts at once, where proper-lockfile's lock stayed for its 30 s
 * staleness. Node has no flock of its own and the packages that add it (`fs-ext`,
 * `os-lock`) are native addons that npm 11 does not build unasked and a bundle cannot
 * carry, so util-linux's flock(1) locks this process's descriptor: the child gets the
 * same open file as its fd 3, locks it and exits, and the lock stays with the open file.
 * Rejects naming the holder's pid when another process has it.
 */
export async function lockWorkDir(workDir: string): Promise<WorkDirLock> {
  const file = path.join(workDir, WORK_DIR_LOCK_FILE);
  const flock = await findFlock();
  // 'a+' creates the file without truncating it: the holder's pid stays readable until ours replaces it.
  const handle = await open(file, 'a+', 0o600);
  let status: number | null;
  try {
    status = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        flock,
        ['--exclusive', '--nonblock', '--conflict-exit-code', String(HELD_EXIT_CODE), '3'],
        {
          stdio: ['ignore', 'ignore', 'ignore', handle.fd],
        },
      );
      child.on('error', reject);
      child.on('exit', (code) => resolve(code));
    });
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (status === HELD_EXIT_CODE) {
    await handle.close();
    const holder = (await readFile(file, 'utf8').catch(() => '')).trim();
    throw new Error(
      `Another runner (${/^\d+$/.test(holder) ? `pid ${holder}` : 'pid unknown'}) is using the work directory ` +
        `${workDir}; give this one its own with --work-dir`,
    );
  }
  if (status !== 0) {
    await handle.close();
    throw new Error(`Cannot lock the work directory ${workDir}: ${flock} exited with ${String(status)}`);
  }
  await handle.truncate(0);
  await handle.write(`${process.pid}\n`);
  return {
    file,
    async release() {
      await handle.truncate(0).catch(() => undefined);
      await handle.close();
    },
  };
}

async function findFlock(): Promise<string> {
  for (const candidate of FLOCK_PATHS) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new Error(
    `The runner locks its work directory with flock(1) from util-linux, found at none of ${FLOCK_PATHS.join(', ')}: install util-linux`,
  );
}
