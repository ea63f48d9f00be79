import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { PidFileHeldError } from './pid-file-held-error.js';

/** flock(1)'s exit code when the lock stays held (`--nonblock`, or `--wait` ran out), chosen to differ from its errors. */
const HELD_EXIT_CODE = 75;

/** A pid file this process holds locked until `release()`, or until it dies. */
export interface PidFileLock {
  /**
   * What the file held when this process took it: empty after a clean release; what a
   * holder that died wrote (its pid, then what it passed to `record`) otherwise.
   */
  leftBehind: string;
  /** Rewrites the file as this process's pid followed by `lines`, for a later holder to read in `leftBehind`. */
  record(lines: string): Promise<void>;
  /** Empties the file and drops the lock. */
  release(): Promise<void>;
}

export interface LockPidFileOptions {
  /** util-linux's flock(1), as findFlock() finds it. */
  flock: string;
  /** How long to wait for the process holding it to let go; 0 refuses at once. */
  waitMs: number;
  /** Told once, with the holder's pid (null when it wrote none yet), when the wait begins. */
  onHeld?: (holderPid: number | null) => void;
}

/**
 * Locks `file` with flock(2) and writes this process's pid in it, waiting up to `waitMs`
 * for another holder; rejects with PidFileHeldError naming that holder's pid. The kernel
 * drops an flock when the last descriptor of its open file closes, so a holder killed hard
 * (kill -9, the OOM killer) leaves nothing to wait for, where a lock that must go stale
 * (proper-lockfile's) keeps the next process waiting. Node has no flock of its own and the
 * packages that add it (`fs-ext`, `os-lock`) are native addons that npm 11 does not build
 * unasked and a bundle cannot carry, so util-linux's flock(1) locks this process's
 * descriptor: the child gets the same open file as its fd 3, locks it (blocking in the
 * kernel until the holder lets go, so nothing polls) and exits, and the lock stays with the
 * open file. Node opens files close-on-exec, so the processes this one starts (stages) never
 * inherit the descriptor and cannot keep the lock alive after it dies.
 */
export async function lockPidFile(file: string, options: LockPidFileOptions): Promise<PidFileLock> {
  // Created when missing, never truncated by opening: the holder's pid stays readable to
  // whoever is refused. Not O_APPEND, so writes can start at offset 0 (see `rewrite`).
  const handle = await open(file, constants.O_RDWR | constants.O_CREAT, 0o600);
  try {
    const holderPid = async (): Promise<number | null> =>
      holderPidOf(await readFile(file, 'utf8').catch(() => ''));
    let { status, stderr } = await runFlock(options.flock, handle, options.onHeld ? 0 : options.waitMs);
    if (status === HELD_EXIT_CODE && options.onHeld && options.waitMs > 0) {
      // Tried without waiting first, so that whoever waits is told who for before the wait.
      options.onHeld(await holderPid());
      ({ status, stderr } = await runFlock(options.flock, handle, options.waitMs));
    }
    if (status === HELD_EXIT_CODE) throw new PidFileHeldError(file, await holderPid());
    if (status !== 0) {
      throw new Error(
        `Cannot lock ${file}: ${options.flock} exited with ${String(status)}${stderr ? ` (${stderr})` : ''}`,
      );
    }
    const leftBehind = await handle.readFile('utf8');
    // Written over in place, then cut to length, so a process refused meanwhile reads a pid
    // (the old one or ours), never an emptied file.
    const rewrite = async (text: string): Promise<void> => {
      const bytes = Buffer.from(text);
      await handle.write(bytes, 0, bytes.length, 0);
      await handle.truncate(bytes.length);
    };
    await rewrite(`${process.pid}\n`);
    return {
      leftBehind,
      record: (lines) => rewrite(`${process.pid}\n${lines}`),
      async release() {
        await handle.truncate(0).catch(() => undefined);
        await handle.close();
      },
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function runFlock(
  flock: string,
  handle: FileHandle,
  waitMs: number,
): Promise<{ status: number | null; stderr: string }> {
  const wait = waitMs > 0 ? ['--wait', (waitMs / 1000).toFixed(3)] : ['--nonblock'];
  return new Promise((resolve, reject) => {
    const child = spawn(
      flock,
      ['--exclusive', ...wait, '--conflict-exit-code', String(HELD_EXIT_CODE), '3'],
      { stdio: ['ignore', 'ignore', 'pipe', handle.fd] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr: stderr.trim() }));
  });
}

/** The pid on the file's first line, as its holder wrote it; null when there is none yet. */
function holderPidOf(text: string): number | null {
  const first = text.split('\n', 1)[0]?.trim() ?? '';
  return /^\d+$/.test(first) ? Number(first) : null;
}
