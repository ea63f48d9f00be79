/**
 * Which version of a file is on disk, without reading it: its inode, size and mtime.
 * A file edited and put back has its old bytes but another stamp (a rewrite gets another
 * inode or mtime), so a dep or a code file a stage rewrote while it ran is caught though
 * its digest is the same. Not ctime: handing the checkout to a stage user (chownTree)
 * changes it and nothing else.
 */
export function fileStamp(ino: number, size: number, mtimeMs: number): string {
  return `${ino}\0${size}\0${mtimeMs}`;
}
