import { spawnSync } from 'node:child_process';
import type { StageUser } from './stage-user.js';
import { userProcesses } from './user-processes.js';

/** More rounds than this, something keeps starting processes as root for the user: give up. */
const ROUNDS = 10;

/**
 * SIGKILLs every process of the stage user: `kill -KILL -1` run as that user, which the
 * kernel delivers to all of the user's processes in one pass over the process table,
 * so a fork loop cannot outrun it, and which reaches the `setsid` daemons a process
 * group misses. Only safe because the user is dedicated to stages (resolve-stage-user.ts).
 * Repeated while the scan still finds one (a process caught between fork and exec, or
 * one dying: SIGKILLed processes leave the table a moment later).
 */
export function killUserProcesses(user: StageUser): void {
  for (let round = 0; round < ROUNDS; round += 1) {
    // The shell itself is the one process of the user that `kill -1` spares.
    spawnSync('/bin/sh', ['-c', 'kill -KILL -1'], { uid: user.uid, gid: user.gid, env: {}, stdio: 'ignore' });
    const left = userProcesses(user.uid);
    if (left.length === 0) return;
    // The shell cannot start when the user is at its process limit (a fork bomb): root kills one by one.
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone since the scan.
      }
    }
  }
}
