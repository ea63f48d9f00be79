/**
 * The wait for a lock was given up because the process was told to stop (Ctrl-C, SIGTERM,
 * a closed terminal): callers branch on it to end as that signal ends a command, not as a
 * failure to lock.
 */
export class LockWaitInterruptedError extends Error {
  constructor(
    readonly file: string,
    /** The signal that ended the wait when known (it killed flock(1) too); null when only aborted. */
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`stopped waiting for another fluksio process to let go of ${file}; nothing was done`);
    this.name = 'LockWaitInterruptedError';
  }
}
