import type { Stats } from 'node:fs';

/**
 * The mode git records for a working-tree entry (`git add`): 120000 for a symlink,
 * 100755 for a regular file its owner may execute, else 100644. Group and other bits
 * do not count, as in git.
 */
export function gitFileMode(stats: Stats): '100644' | '100755' | '120000' {
  if (stats.isSymbolicLink()) return '120000';
  return (stats.mode & 0o100) !== 0 ? '100755' : '100644';
}
