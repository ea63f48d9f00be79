import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { LockWaitInterruptedError } from './lock-wait-interrupted-error.js';
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
  /** Gives up the wait (LockWaitInterruptedError) when aborted: Ctrl-C while a command waits. */
  signal?: AbortSignal;
}

/** Signals that stop a command, which reach flock(1) too when sent to the process group. */
const STOPPING_SIGNALS: ReadonlySet<NodeJS.Signals> = new Set(['SIGINT', 'SIGTERM', 'SIGHUP']);

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
    const flockFor = (waitMs: number) => runFlock(options.flock, handle, waitMs, options.signal);
    let { status, killedBy, stderr } = await flockFor(options.onHeld ? 0 : options.waitMs);
    if (status === HELD_EXIT_CODE && options.onHeld && options.waitMs > 0) {
      // Tried without waiting first, so that whoever waits is told who for before the wait.
      options.onHeld(await holderPid());
      ({ status, killedBy, stderr } = await flockFor(options.waitMs));
    }
    // The process was told to stop while flock(1) waited: either it aborted the wait (the
    // signal was sent to it alone), or flock(1) got the signal too (sent to the process
    // group: Ctrl-C, a closed terminal), which may be seen before this process's own handler.
    if (status !== 0 && options.signal?.aborted) throw new LockWaitInterruptedError(file, killedBy);
    if (killedBy !== null && STOPPING_SIGNALS.has(killedBy))
      throw new LockWaitInterruptedError(file, killedBy);
    if (status === HELD_EXIT_CODE) throw new PidFileHeldError(file, await holderPid());
    if (status !== 0) {
      const ended = killedBy === null ? `exited with ${String(status)}` : `was killed by ${killedBy}`;
      throw new Error(`Cannot lock ${file}: ${options.flock} ${ended}${stderr ? ` (${stderr})` : ''}`);
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
  signal: AbortSignal | undefined,
): Promise<{ status: number | null; killedBy: NodeJS.Signals | null; stderr: string }> {
  const wait = waitMs > 0 ? ['--wait', (waitMs / 1000).toFixed(3)] : ['--nonblock'];
  if (signal?.aborted) return Promise.resolve({ status: null, killedBy: null, stderr: '' });
  return new Promise((resolve, reject) => {
    const child = spawn(
      flock,
      ['--exclusive', ...wait, '--conflict-exit-code', String(HELD_EXIT_CODE), '3'],
      { stdio: ['ignore', 'ignore', 'pipe', handle.fd] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const stopWaiting = () => child.kill('SIGTERM');
    signal?.addEventListener('abort', stopWaiting, { once: true });
    child.on('error', (error) => {
      signal?.removeEventListener('abort', stopWaiting);
      reject(error);
    });
    child.on('close', (status, killedBy) => {
      signal?.removeEventListener('abort', stopWaiting);
      resolve({ status, killedBy, stderr: stderr.trim() });
    });
  });
}

/** The pid on the file's first line, as its holder wrote it; null when there is none yet. */
function holderPidOf(text: string): number | null {
  const first = text.split('\n', 1)[0]?.trim() ?? '';
  return /^\d+$/.test(first) ? Number(first) : null;
}
