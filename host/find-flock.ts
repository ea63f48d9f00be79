import { execFile } from 'node:child_process';

/** Where util-linux installs flock(1); a runner's PATH may hold git alone, so it is found by path. */
export const FLOCK_PATHS = ['/usr/bin/flock', '/bin/flock'];

let found: Promise<string | null> | undefined;

/**
 * util-linux's flock(1), or null where it is not installed: macOS has none, and BusyBox's
 * (Alpine's `/usr/bin/flock`) takes neither `--wait` nor `--conflict-exit-code`, which
 * lockPidFile needs, so a candidate counts only when its `--version` names util-linux.
 * Asked once per process (the first lock pays one spawn), since the answer does not change
 * while it runs.
 */
export function findFlock(): Promise<string | null> {
  found ??= firstUtilLinuxFlock();
  return found;
}

async function firstUtilLinuxFlock(): Promise<string | null> {
  for (const candidate of FLOCK_PATHS) {
    const version = await new Promise<string>((resolve) => {
      execFile(candidate, ['--version'], { timeout: 10_000 }, (error, stdout) =>
        resolve(error ? '' : stdout),
      );
    });
    if (version.includes('util-linux')) return candidate;
  }
  return null;
}
