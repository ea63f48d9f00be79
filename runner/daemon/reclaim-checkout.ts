import { existsSync } from 'node:fs';
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { chownTree } from '../sandbox/chown-tree.js';
import { killUserProcesses } from '../sandbox/kill-user-processes.js';
import type { StageUser } from '../sandbox/stage-user.js';

/** The world-writable directories where a stage user's files would outlive its run. */
const SHARED_TEMP_DIRS = ['/tmp', '/var/tmp', '/dev/shm'];

/**
 * Takes a run's checkout back from the stage user, before the runner's git touches it
 * and after the run's stages: every process of the user is killed (a `setsid` daemon, or
 * one the fingerprint command left when every stage was cached), the checkout becomes
 * the runner's again, wholly (git refuses a repository, submodules included, that
 * another user owns) and 0700, so that later runs' stages cannot enter it, and what the
 * user left at the top of `/tmp`, `/var/tmp` and `/dev/shm` is removed: a later run's
 * stages, the same user, would find it there.
 */
export async function reclaimCheckout(checkout: string, user: StageUser): Promise<void> {
  killUserProcesses(user);
  if (existsSync(checkout)) {
    chownTree(checkout, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    await chmod(checkout, 0o700);
  }
  for (const dir of SHARED_TEMP_DIRS) {
    for (const name of await readdir(dir).catch(() => [])) {
      const entry = path.join(dir, name);
      const owner = await lstat(entry).then(
        (stats) => stats.uid,
        () => null,
      );
      if (owner === user.uid) await rm(entry, { recursive: true, force: true });
    }
  }
}
