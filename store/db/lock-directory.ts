import { rmdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { lock } from 'proper-lockfile';
import { findFlock } from '../../host/find-flock.js';
import { lockPidFile, type PidFileLock } from '../../host/lock-pid-file.js';
import { holderName, PidFileHeldError } from '../../host/pid-file-held-error.js';

/** How long proper-lockfile's `<dir>.lock` stays respected once its holder stops refreshing it. */
const STALE_MS = 30_000;
/**
 * Removing a dead holder's `<dir>.lock` at once is left to proper-lockfile's staleness when
 * the lock is this close to stale: an older fluksio waiting for it may be taking it over.
 */
const TAKEOVER_MARGIN_MS = 5_000;

/** The holder file's line naming the `<dir>.lock` its holder made: `lockfile <inode> <birth time, ns>`. */
const LOCKFILE_RECORD = 'lockfile';

export interface LockDirectoryOptions {
  /**
   * util-linux's flock(1), or null to lock as where it is missing (macOS).
   * @defaultValue findFlock()
   */
  flock?: string | null;
  /**
   * Told once, naming the holder (`pid 123`, or why its pid is unknown), when another process
   * has the store and the wait for it begins: a run that waits says so instead of hanging.
   */
  onWait?: (holder: string) => void;
  /** Gives up the wait for the flock (LockWaitInterruptedError) when aborted: Ctrl-C while a command waits. */
  signal?: AbortSignal;
}

/**
 * Takes the lock of a local store's directory for this process, waiting up to `waitMs`;
 * fails with a sentence saying why, naming the holder's pid. Resolves to what releases it.
 *
 * Two locks, taken in this order. First flock(2) on `<dir>.lock-holder` (lockPidFile), which
 * holds the holder's pid: the kernel drops it when its holder dies, so a run started after one
 * killed outright (kill -9, the OOM killer) starts at once. Then proper-lockfile's `<dir>.lock`
 * directory, which is all that fluksio before this one (and fluksio where flock(1) is missing,
 * as on macOS) knows: two processes must never open one store (PGlite loses writes), and a
 * process of each kind can share a project. That lock goes stale 30 s after its holder stops
 * refreshing it — generously, because a holder may keep its event loop busy (PGlite runs
 * queries on this thread) and a live lock must not look abandoned — so a process killed
 * holding it would make the next one wait. It need not: once we hold the flock, no process
 * that takes the flock holds the store, and the holder file still says what its last holder
 * left. Each holder records the `<dir>.lock` it made (inode and birth time); a `<dir>.lock`
 * that is that very directory belongs to a holder now dead and is removed at once. A
 * directory made since — an older fluksio that judged it stale and took it over makes a new
 * one — differs, and is waited for like any other. A recorded lock within 5 s of going stale
 * is left to proper-lockfile's staleness too, so that the removal never races an older
 * fluksio's takeover; the only race left is proper-lockfile's own, between two processes that
 * both find a lock stale. Where a file system keeps no birth time, nothing is recorded and a
 * dead holder's `<dir>.lock` goes stale as before.
 */
export async function lockDirectory(
  dir: string,
  waitMs: number,
  options: LockDirectoryOptions = {},
): Promise<() => Promise<void>> {
  const flock = options.flock === undefined ? await findFlock() : options.flock;
  if (flock === null) return lockWithLockfile(dir, waitMs, null, options.onWait);
  const deadline = Date.now() + waitMs;
  const onWait = options.onWait;
  const held = await lockPidFile(`${resolve(dir)}.lock-holder`, {
    flock,
    waitMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(onWait ? { onHeld: (pid: number | null) => onWait(holderName(pid)) } : {}),
  }).catch((error: unknown) => {
    if (!(error instanceof PidFileHeldError)) throw error;
    throw inUse(dir, holderName(error.holderPid), error);
  });
  const unlock = await takeLockfile(dir, held, Math.max(0, deadline - Date.now()), options.onWait).catch(
    async (error: unknown) => {
      await held.release();
      throw error;
    },
  );
  return async () => {
    try {
      await unlock();
    } finally {
      await held.release();
    }
  };
}

/**
 * Takes `<dir>.lock` for a process holding the flock: first removing the one a dead holder
 * left, then recording the one it makes for the next holder to recognise.
 */
async function takeLockfile(
  dir: string,
  held: PidFileLock,
  waitMs: number,
  onWait: ((holder: string) => void) | undefined,
): Promise<() => Promise<void>> {
  const lockfile = `${resolve(dir)}.lock`;
  await removeLockfileLeftBehind(lockfile, held.leftBehind);
  const unlock = await lockWithLockfile(
    dir,
    waitMs,
    'pid unknown: an older fluksio, or one stopped less than 30 s ago',
    onWait,
  );
  try {
    const made = await stat(lockfile, { bigint: true });
    if (made.birthtimeNs > 0n) await held.record(`${LOCKFILE_RECORD} ${made.ino} ${made.birthtimeNs}\n`);
  } catch (error) {
    await unlock();
    throw error;
  }
  return unlock;
}

/**
 * Removes `lockfile` when it is the one a dead holder recorded in `leftBehind` and is not
 * about to go stale (see lockDirectory). Called holding the flock.
 */
async function removeLockfileLeftBehind(lockfile: string, leftBehind: string): Promise<void> {
  const recorded = leftBehind
    .split('\n')
    .map((line) => line.split(' '))
    .find((words) => words[0] === LOCKFILE_RECORD && words.length === 3);
  if (!recorded) return;
  const found = await stat(lockfile, { bigint: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!found || String(found.ino) !== recorded[1] || String(found.birthtimeNs) !== recorded[2]) return;
  if (Date.now() - Number(found.mtimeMs) >= STALE_MS - TAKEOVER_MARGIN_MS) return;
  await rmdir(lockfile).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/** proper-lockfile's `<dir>.lock`, as fluksio took it alone before it used flock(1). */
async function lockWithLockfile(
  dir: string,
  waitMs: number,
  holder: string | null,
  onWait?: (holder: string) => void,
): Promise<() => Promise<void>> {
  const attempt = (retries: number) =>
    lock(dir, {
      realpath: false,
      stale: STALE_MS,
      update: 5_000,
      retries: { retries, minTimeout: 200, maxTimeout: 200, factor: 1 },
      // Compromised means another process judged us dead and took the directory; there is
      // nothing sound left to do from a timer callback, and throwing there would crash.
      onCompromised: () => {},
    });
  const retries = Math.max(0, Math.ceil(waitMs / 200));
  try {
    if (!onWait || retries === 0) return await attempt(retries);
    // Once without waiting, so that whoever waits is told before the wait.
    return await attempt(0).catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      onWait(holder ?? 'pid unknown');
      return attempt(retries);
    });
  } catch (error) {
    throw inUse(dir, holder, error);
  }
}

function inUse(dir: string, holder: string | null, cause: unknown): Error {
  return new Error(
    `The local store ${dir} is in use by another fluksio process${holder ? ` (${holder})` : ''}; ` +
      'wait for it to finish and try again',
    { cause },
  );
}
