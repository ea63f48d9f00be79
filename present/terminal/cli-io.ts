import type { Writable } from 'node:stream';

/**
 * Runs `work` so that a second Ctrl-C does not exit before it is done (the cancel requests
 * the first one sent): `what` names it in the message a second Ctrl-C prints, and
 * `unfinished` says what of it is left undone when a third exits anyway (null: nothing).
 * Resolves or rejects as `work` does.
 */
export type HoldExit = <T>(
  work: Promise<T>,
  about: { what: string; unfinished: () => string | null },
) => Promise<T>;

/**
 * What a command may touch of its process, passed in so tests run commands in-process
 * with their own directory, environment and captured output.
 */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Cancels the running command (Ctrl-C). */
  signal?: AbortSignal;
  /** Keeps a second Ctrl-C from exiting during work the first one started; absent in-process. */
  holdExit?: HoldExit;
}

/** The real process's streams, directory and environment, and what Ctrl-C does to it. */
export function processIo(interrupts?: { signal: AbortSignal; holdExit?: HoldExit }): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env: process.env,
    ...(interrupts?.signal ? { signal: interrupts.signal } : {}),
    ...(interrupts?.holdExit ? { holdExit: interrupts.holdExit } : {}),
  };
}
