import { execFileSync, spawnSync } from 'node:child_process';
import type { StageUser } from '../../runner/sandbox/stage-user.js';

/** A system user for stages, and whether this test made it (then it removes it after). */
export interface StageTestUser {
  user: StageUser;
  remove(): void;
}

/**
 * The system user `name`, made with `useradd --system --no-create-home` when the machine
 * has none; `remove()` deletes it only then. Each test file uses a name of its own: a
 * stage user must be dedicated, and files run in parallel.
 */
export function stageTestUser(name: string): StageTestUser {
  const created = spawnSync('id', ['-u', name]).status !== 0;
  if (created)
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return {
    user: { name, uid: id('-u'), gid: id('-g') },
    remove: () => {
      if (created) execFileSync('userdel', [name]);
    },
  };
}
