import { fileStamp } from './file-stamp.js';

/**
 * The fileStamp of each file a code index read, kept as the lstat's numbers while the
 * index is read: a read that keys stages never asks for one, and a string and a map entry
 * per file would cost a warm 5,000-file read about a twentieth of its time. The stamps
 * are made, and looked up by path, only when an after-check compares two reads.
 */
export class FileStamps {
  private readonly paths: string[] = [];
  /** inode, size and mtimeMs of `paths[i]` at `3 * i`. */
  private readonly numbers: number[] = [];
  /** Stamps made whole, such as a submodule's over its files'. */
  private readonly made = new Map<string, string>();
  private byPath: Map<string, number> | null = null;

  /** Records a file's stamp from its lstat's numbers. */
  add(repoPath: string, ino: number, size: number, mtimeMs: number): void {
    this.paths.push(repoPath);
    this.numbers.push(ino, size, mtimeMs);
    this.byPath = null;
  }

  /** Records a stamp made elsewhere. */
  addStamp(repoPath: string, stamp: string): void {
    this.made.set(repoPath, stamp);
  }

  /** The stamp of `repoPath`, or undefined when none was recorded (a file not on disk). */
  get(repoPath: string): string | undefined {
    const made = this.made.get(repoPath);
    if (made !== undefined) return made;
    if (this.byPath === null) this.byPath = new Map(this.paths.map((path, i) => [path, i]));
    const entry = this.byPath.get(repoPath);
    return entry === undefined ? undefined : this.stampAt(entry);
  }

  /** Every path and its stamp, in no particular order. */
  *entries(): IterableIterator<[string, string]> {
    for (let entry = 0; entry < this.paths.length; entry += 1) {
      yield [this.paths[entry] as string, this.stampAt(entry)];
    }
    yield* this.made;
  }

  private stampAt(entry: number): string {
    const at = 3 * entry;
    const numbers = this.numbers;
    return fileStamp(numbers[at] as number, numbers[at + 1] as number, numbers[at + 2] as number);
  }
}
