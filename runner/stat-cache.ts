import { randomUUID } from 'node:crypto';
import { constants, readFileSync, type Stats } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../schemas/canonical-json.js';
import type { GitObjectFormat } from './git-blob-id.js';

/**
 * How long after a file was last written or changed its content id stays unsaved. A
 * timestamp only proves that nothing changed if a later write would get another one: an
 * edit within the same clock tick as the read ("racy git") keeps mtime, ctime and maybe
 * size. Kernels stamp files with a coarse clock, some filesystems count whole seconds
 * (FAT two), so an entry is kept only once its file is this much older than the read.
 */
export const RACY_WINDOW_MS = 2000;

/**
 * What a stat cache file held, as loaded; null when there was none or it could not be
 * trusted. `items` is the file's array after its header: six elements per file (path,
 * inode, size, mtimeMs, ctimeMs, `<mode> <blob id>`), kept flat because a tuple per file
 * costs a 5,000-file read more in allocation than everything else it does.
 */
export interface LoadedStatCache {
  objectFormat: GitObjectFormat;
  items: (string | number)[];
}

/** The first element of the file's array: its layout, then the object format its ids are in. */
const HEADER = 'fluksio-stat-cache 2';

/** Elements per file in the array: path, inode, size, mtimeMs, ctimeMs, `<mode> <id>`. */
const STRIDE = 6;

/**
 * Reads a stat cache file: a line with the sha256 of the rest, then one JSON array, the
 * header and then six elements per file. A missing, unreadable, truncated or altered
 * file, or one of another layout, gives null: a cache that cannot be trusted is only a
 * slower read, never a wrong id. (Checked element by element rather than by a zod
 * schema: compiling one for 5,000 tuples costs a fresh process more than the reads the
 * cache saves; the checksum already tells damage, so the checks only keep a forged file
 * from breaking the read: a forged id is no worse than a forged checksum.)
 */
export function loadStatCache(file: string): LoadedStatCache | null {
  let text: string;
  try {
    // At once rather than through the thread pool: a read of a few hundred kilobytes
    // costs less than the event-loop turns an async read takes while git is starting.
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const newline = text.indexOf('\n');
  const body = text.slice(newline + 1);
  if (newline < 0 || text.slice(0, newline) !== sha256Hex(body)) return null;
  let array: unknown;
  try {
    array = JSON.parse(body);
  } catch {
    return null;
  }
  if (!Array.isArray(array) || (array.length - 1) % STRIDE !== 0) return null;
  const objectFormat =
    array[0] === `${HEADER} sha1` ? 'sha1' : array[0] === `${HEADER} sha256` ? 'sha256' : null;
  if (objectFormat === null) return null;
  const valueLength = '100644 '.length + (objectFormat === 'sha1' ? 40 : 64);
  for (let i = 1; i < array.length; i += STRIDE) {
    const value: unknown = array[i + 5];
    const repoPath: unknown = array[i];
    if (typeof repoPath !== 'string' || repoPath.includes('\0')) return null;
    if (typeof value !== 'string' || value.length !== valueLength) return null;
    for (let field = 1; field < 5; field += 1) {
      if (typeof array[i + field] !== 'number') return null;
    }
  }
  return { objectFormat, items: (array as (string | number)[]).slice(1) };
}

/**
 * The `<mode> <blob id>` of working-tree files, each trusted while the file's inode,
 * size, mtime and ctime are still those it was hashed under (and it is still a regular
 * file of the same mode); git's own index is not asked, so `core.trustctime`,
 * `core.checkStat` or an index refreshed by someone else change nothing. One scan's
 * lookups and new entries become the next file on `save`: entries of files no longer
 * seen are dropped.
 */
export class StatCache {
  private readonly items: (string | number)[];
  /** Path → offset of its entry in `items`. */
  private readonly offsets = new Map<string, number>();
  /** Per loaded entry, 1 once this scan found its stat unchanged. */
  private readonly hits: Uint8Array;
  private hitCount = 0;
  /** Entries of files hashed by this scan, laid out as `items`. */
  private readonly added: (string | number)[] = [];

  /**
   * @param file where `save` writes; null keeps nothing between scans.
   * @param loaded what the file held; ignored when its ids are of another object format.
   * @param scanStartedMs `Date.now()` before the first file of the scan was read.
   */
  constructor(
    private readonly file: string | null,
    readonly objectFormat: GitObjectFormat,
    loaded: LoadedStatCache | null,
    private readonly scanStartedMs: number,
  ) {
    this.items = loaded?.objectFormat === objectFormat ? loaded.items : [];
    for (let offset = 0; offset < this.items.length; offset += STRIDE) {
      this.offsets.set(this.items[offset] as string, offset);
    }
    this.hits = new Uint8Array(this.items.length / STRIDE);
  }

  /** The paths the loaded file has entries for, in its order. */
  *knownPaths(): Generator<string> {
    for (let offset = 0; offset < this.items.length; offset += STRIDE) yield this.items[offset] as string;
  }

  /**
   * The `<mode> <id>` recorded for `repoPath` when `stats` (its lstat now) still matches
   * the entry; null otherwise. A match is remembered for `hit` and kept by `save`.
   */
  lookup(repoPath: string, stats: Stats): string | null {
    const offset = this.offsets.get(repoPath);
    if (offset === undefined) return null;
    const items = this.items;
    const value = items[offset + 5] as string;
    if (
      items[offset + 1] !== stats.ino ||
      items[offset + 2] !== stats.size ||
      items[offset + 3] !== stats.mtimeMs ||
      items[offset + 4] !== stats.ctimeMs ||
      (stats.mode & constants.S_IFMT) !== constants.S_IFREG ||
      // '100755'[3] is '7': the owner's exec bit, the only mode bit git records.
      (value.charCodeAt(3) === 0x37) !== ((stats.mode & 0o100) !== 0)
    ) {
      return null;
    }
    if (this.hits[offset / STRIDE] === 0) {
      this.hits[offset / STRIDE] = 1;
      this.hitCount += 1;
    }
    return value;
  }

  /** What an earlier `lookup` of this scan found unchanged for `repoPath`, or null. */
  hit(repoPath: string): string | null {
    const offset = this.offsets.get(repoPath);
    return offset !== undefined && this.hits[offset / STRIDE] === 1
      ? (this.items[offset + 5] as string)
      : null;
  }

  /**
   * Records the `<mode> <id>` a regular file was just hashed to under `stats`, unless it
   * changed too recently to vouch for it.
   */
  remember(repoPath: string, stats: Stats, value: string): void {
    if (Math.max(stats.mtimeMs, stats.ctimeMs) >= this.scanStartedMs - RACY_WINDOW_MS) return;
    this.added.push(repoPath, stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs, value);
  }

  /**
   * Writes what this scan found, when it differs from what was loaded: atomically (a
   * temporary file renamed into place), so a concurrent reader sees the old or the new
   * file, never half of one. A cache that cannot be written (a read-only checkout) only
   * makes the next scan hash again, so a failure here is not an error.
   */
  async save(): Promise<void> {
    if (this.file === null || (this.added.length === 0 && this.hitCount === this.hits.length)) return;
    const array: (string | number)[] = [`${HEADER} ${this.objectFormat}`];
    for (let offset = 0; offset < this.items.length; offset += STRIDE) {
      if (this.hits[offset / STRIDE] === 1) {
        for (let field = 0; field < STRIDE; field += 1)
          array.push(this.items[offset + field] as string | number);
      }
    }
    const body = JSON.stringify(array.concat(this.added));
    const temp = `${this.file}.${randomUUID()}.tmp`;
    try {
      await mkdir(path.dirname(this.file), { recursive: true });
      await writeFile(temp, `${sha256Hex(body)}\n${body}`);
      await rename(temp, this.file);
    } catch {
      await rm(temp, { force: true }).catch(() => {});
    }
  }
}
