/** A holder as messages name it: `pid 123`, or `pid unknown` before it has written its pid. */
export function holderName(pid: number | null): string {
  return pid === null ? 'pid unknown' : `pid ${pid}`;
}

/**
 * Another process holds a pid file's lock (lockPidFile refused, or waited in vain): callers
 * branch on it to say, in their own words, which process is in the way.
 */
export class PidFileHeldError extends Error {
  constructor(
    readonly file: string,
    /** The holder's pid as it wrote it in the file; null before it has written it. */
    readonly holderPid: number | null,
  ) {
    super(
      `${file} is locked by ${holderPid === null ? 'a process that has not written its pid yet' : `pid ${holderPid}`}`,
    );
    this.name = 'PidFileHeldError';
  }
}
