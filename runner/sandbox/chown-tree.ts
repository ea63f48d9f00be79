import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * Gives a directory and everything in it to `uid:gid`, never following a symlink (the
 * link itself changes hands). A regular file with more than one link is left as it is:
 * where hard links to other users' files can be made (`fs.protected_hardlinks=0`), one
 * planted in the tree must not carry that file's ownership along. Entries that vanish
 * during the walk are skipped.
 *
 * Synchronous: it runs where a stage is launched, which cannot wait, and while no
 * process of the stage user exists that could swap an entry under the walk.
 */
export function chownTree(root: string, uid: number, gid: number): void {
  const pending = [root];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    let stats;
    try {
      stats = lstatSync(current);
      if ((stats.uid !== uid || stats.gid !== gid) && !(stats.isFile() && stats.nlink > 1)) {
        lchownSync(current, uid, gid);
      }
      if (stats.isDirectory()) {
        for (const name of readdirSync(current)) pending.push(path.join(current, name));
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
