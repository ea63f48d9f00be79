import type { Writable } from 'node:stream';

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
}

/** The real process's streams, directory and environment. */
export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env: process.env,
    ...(signal ? { signal } : {}),
  };
}
