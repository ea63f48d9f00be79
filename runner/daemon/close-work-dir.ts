import { execFile } from 'node:child_process';
import { chmod, lchown, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { StageUser } from '../sandbox/stage-user.js';

const run = promisify(execFile);

export interface CloseWorkDirOptions {
  /** The runner's work directory, real. */
  workDir: string;
  /** Concurrency slots: each has a `checkouts/<slot>` the user must be able to pass through. */
  slots: number;
  user: StageUser;
  /** What the user must not read besides the work directory's own: the token file, the `--env-file`, the runner's home. */
  secrets: readonly string[];
}

/**
 * Sets the work directory's permissions for a stage user, then checks them as that user
 * before any run (DESIGN §6, issue 9): the work directory and `checkouts/<slot>` are
 * 0711 (passable, not listable: the run's checkout, handed to the user, is reached
 * through them); `mirrors/` and `blobs/` are 0700; every checkout left from earlier runs
 * is the runner's and 0700. Rejects, naming the path and the fix, when the user cannot
 * reach the checkouts (a parent directory closed to others) or can read the mirrors, the
 * blob cache or one of the `secrets`.
 */
export async function closeWorkDir(options: CloseWorkDirOptions): Promise<void> {
  const { workDir, user } = options;
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  await chmod(workDir, 0o711);
  const closed = ['mirrors', 'blobs'].map((name) => path.join(workDir, name));
  for (const dir of closed) {
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o700);
  }
  const slots = Array.from({ length: options.slots }, (_, slot) =>
    path.join(workDir, 'checkouts', String(slot)),
  );
  for (const dir of [path.join(workDir, 'checkouts'), ...slots]) {
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o711);
  }
  for (const slot of await readdir(path.join(workDir, 'checkouts'))) {
    const slotDir = path.join(workDir, 'checkouts', slot);
    for (const checkout of await readdir(slotDir).catch(() => [])) {
      await lchown(path.join(slotDir, checkout), uid, gid);
      await chmod(path.join(slotDir, checkout), 0o700);
    }
  }

  for (const dir of slots) {
    if (!(await canAs(user, 'test -d "$1" && test -x "$1"', dir))) {
      throw new Error(
        `--stage-user ${user.name}: it cannot reach ${dir}, where its runs are checked out (a parent directory is ` +
          'closed to other users); give --work-dir a directory every user may pass through, e.g. /var/lib/fluksio-runner',
      );
    }
  }
  for (const secret of [...closed, ...options.secrets]) {
    if (await canAs(user, 'test -r "$1" || { test -d "$1" && test -x "$1"; }', secret)) {
      throw new Error(
        `--stage-user ${user.name}: it can read ${secret}, which its stages must not; ` +
          `make it the runner's alone: chmod go-rwx ${secret}`,
      );
    }
  }
}

/** Whether the shell test holds for `file` when run as the user. */
async function canAs(user: StageUser, test: string, file: string): Promise<boolean> {
  return run('/bin/sh', ['-c', test, 'sh', file], { uid: user.uid, gid: user.gid, env: {} }).then(
    () => true,
    () => false,
  );
}
