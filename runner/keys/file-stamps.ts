import type { Stats } from 'node:fs';

/** The numbers of a file's lstat that a stamp keeps. */
export type StampedStats = Pick<Stats, 'ino' | 'size' | 'mtimeMs'>;

/**
 * The inode, size and mtime each file of a code index had when its id was taken (or
 * vouched for by the stat cache), so that a stage's read of it can be checked against
 * that version later: a rewrite gets another inode or mtime. Not ctime: handing the
 * checkout to a stage user (chownTree) changes it and nothing else. Numbers in one
 * array rather than an object per file, as in the stat cache: a warm read of thousands
 * of files stamps them all.
 */
export class FileStamps {
  private readonly offsets = new Map<string, number>();
  private readonly numbers: number[] = [];

  /** Records `stats` as the version of `repoPath` its id was taken from. */
  take(repoPath: string, stats: StampedStats): void {
    this.offsets.set(repoPath, this.numbers.length);
    this.numbers.push(stats.ino, stats.size, stats.mtimeMs);
  }

  /**
   * Whether `stats` (an lstat of `repoPath` now) shows the version its id was taken
   * from; null when none was stamped.
   */
  holds(repoPath: string, stats: StampedStats): boolean | null {
    const at = this.offsets.get(repoPath);
    if (at === undefined) return null;
    return (
      this.numbers[at] === stats.ino &&
      this.numbers[at + 1] === stats.size &&
      this.numbers[at + 2] === stats.mtimeMs
    );
  }
}
