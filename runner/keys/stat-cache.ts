import { createHash, randomUUID } from 'node:crypto';
import { constants, readFileSync, type Stats } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GitObjectFormat } from '../workspace/git-blob-id.js';
import type { FileStamps } from './file-stamps.js';

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
 * trusted. Entry i is `paths[i]`, `values[i]` (`<mode> <blob id>`) and the four numbers
 * from `stats[4 * i]`: inode, size, mtimeMs, ctimeMs. Columns rather than an object per
 * file, because allocating those costs a 5,000-file read more than all it does besides.
 */
export interface LoadedStatCache {
  objectFormat: GitObjectFormat;
  paths: string[];
  values: string[];
  stats: Float64Array;
}

/** The start of the file's second line: its layout, then the object format its ids are in. */
const HEADER = 'fluksio-stat-cache 3';

/** A save drops stale entries once they are more than 1/STALE_SHARE of the fresh ones. */
const STALE_SHARE = 4;

/** Numbers kept per file: inode, size, mtimeMs, ctimeMs. */
const STAT_FIELDS = 4;

/**
 * Reads a stat cache file: a line with the sha256 of the rest; a line
 * `fluksio-stat-cache 3 <object format> <files> <text bytes>`; then, for each file, its
 * path and its `<mode> <id>`, each ended by a NUL (`<text bytes>` of UTF-8); then the
 * four stat numbers of each file as little-endian doubles. A missing, unreadable,
 * truncated or altered file, or one of another layout, gives null: a cache that cannot
 * be trusted is only a slower read, never a wrong id. Binary numbers and NUL-ended
 * strings because JSON.parse of 30,000 elements was a sixth of a warm 5,000-file read.
 * The checksum tells damage; the length checks only keep a forged file from breaking
 * the read (a forged id is no worse than a forged checksum).
 */
export function loadStatCache(file: string): LoadedStatCache | null {
  let bytes: Buffer;
  try {
    // At once rather than through the thread pool: a read of a few hundred kilobytes
    // costs less than the event-loop turns an async read takes while git is starting.
    bytes = readFileSync(file);
  } catch {
    return null;
  }
  const checksumEnd = bytes.indexOf(0x0a);
  const headerEnd = bytes.indexOf(0x0a, checksumEnd + 1);
  if (checksumEnd < 0 || headerEnd < 0) return null;
  const checksum = createHash('sha256')
    .update(bytes.subarray(checksumEnd + 1))
    .digest('hex');
  if (bytes.toString('latin1', 0, checksumEnd) !== checksum) return null;
  const header = new RegExp(`^${HEADER} (sha1|sha256) (\\d+) (\\d+)$`).exec(
    bytes.toString('latin1', checksumEnd + 1, headerEnd),
  );
  if (header === null) return null;
  const objectFormat = header[1] as GitObjectFormat;
  const count = Number(header[2]);
  const textEnd = headerEnd + 1 + Number(header[3]);
  if (bytes.length - textEnd !== count * STAT_FIELDS * 8) return null;
  const strings = bytes.toString('utf8', headerEnd + 1, textEnd).split('\0');
  if (strings.length !== 2 * count + 1) return null;
  const valueLength = '100644 '.length + (objectFormat === 'sha1' ? 40 : 64);
  const paths: string[] = new Array<string>(count);
  const values: string[] = new Array<string>(count);
  for (let i = 0; i < count; i += 1) {
    paths[i] = strings[2 * i] as string;
    const value = strings[2 * i + 1] as string;
    if (value.length !== valueLength) return null;
    values[i] = value;
  }
  const stats = new Float64Array(count * STAT_FIELDS);
  for (let i = 0; i < stats.length; i += 1) stats[i] = bytes.readDoubleLE(textEnd + 8 * i);
  return { objectFormat, paths, values, stats };
}

/** The file `save` writes for these entries, as `loadStatCache` reads it. */
function statCacheBytes(entries: LoadedStatCache): Buffer {
  const text = Buffer.from(
    entries.paths.map((repoPath, i) => `${repoPath}\0${entries.values[i] ?? ''}\0`).join(''),
  );
  const numbers = Buffer.alloc(entries.stats.length * 8);
  entries.stats.forEach((value, i) => numbers.writeDoubleLE(value, 8 * i));
  const body = Buffer.concat([
    Buffer.from(`${HEADER} ${entries.objectFormat} ${entries.paths.length} ${text.length}\n`),
    text,
    numbers,
  ]);
  return Buffer.concat([Buffer.from(`${createHash('sha256').update(body).digest('hex')}\n`), body]);
}

/**
 * The `<mode> <blob id>` of working-tree files, each trusted while the file's inode,
 * size, mtime and ctime are still those it was hashed under (and it is still a regular
 * file of the same mode); git's own index is not asked, so `core.trustctime`,
 * `core.checkStat` or an index refreshed by someone else change nothing. One scan's
 * matches and new entries become the next file on `save`: entries of files gone or
 * changed are dropped then, or kept (they cannot match) while they are few and nothing
 * else is new.
 */
export class StatCache {
  private readonly known: LoadedStatCache;
  /**
   * Where the next path asked about is expected: a scan asks in git's order, which the
   * file was saved in, so most paths are found here without hashing them into a map.
   */
  private cursor = 0;
  /** Path → its entry's number in `known`, made on the first path not found in order. */
  private byPath: Map<string, number> | null = null;
  /** A known path was asked for out of the file's order: `save` rewrites it in the scan's. */
  private outOfOrder = false;
  /** Per known entry, 1 once this scan found its stat unchanged. */
  private readonly hits: Uint8Array;
  private hitCount = 0;
  /** Entries of files hashed by this scan. */
  private readonly added: { paths: string[]; values: string[]; stats: number[] } = {
    paths: [],
    values: [],
    stats: [],
  };

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
    this.known =
      loaded?.objectFormat === objectFormat
        ? loaded
        : { objectFormat, paths: [], values: [], stats: new Float64Array(0) };
    this.hits = new Uint8Array(this.known.paths.length);
  }

  /** The paths the loaded file has entries for, in its order: entry i is `knownPaths[i]`. */
  get knownPaths(): readonly string[] {
    return this.known.paths;
  }

  /**
   * The `<mode> <id>` recorded for `repoPath` when `stats` (its lstat now) still matches
   * the entry; null otherwise. A match is remembered for `hit` and kept by `save`.
   */
  lookup(repoPath: string, stats: Stats): string | null {
    const entry = this.entryOf(repoPath);
    return entry === undefined ? null : this.lookupEntry(entry, stats);
  }

  /** `lookup` of the known entry numbered `entry`. */
  lookupEntry(entry: number, stats: Stats): string | null {
    const value = this.known.values[entry] as string;
    const at = entry * STAT_FIELDS;
    const known = this.known.stats;
    if (
      known[at] !== stats.ino ||
      known[at + 1] !== stats.size ||
      known[at + 2] !== stats.mtimeMs ||
      known[at + 3] !== stats.ctimeMs ||
      (stats.mode & constants.S_IFMT) !== constants.S_IFREG ||
      // '100755'[3] is '7': the owner's exec bit, the only mode bit git records.
      (value.charCodeAt(3) === 0x37) !== ((stats.mode & 0o100) !== 0)
    ) {
      return null;
    }
    if (this.hits[entry] === 0) {
      this.hits[entry] = 1;
      this.hitCount += 1;
    }
    return value;
  }

  /** What an earlier lookup of this scan found unchanged for `repoPath`, or null. */
  hit(repoPath: string): string | null {
    const entry = this.entryOf(repoPath);
    return entry !== undefined && this.hits[entry] === 1 ? (this.known.values[entry] as string) : null;
  }

  /**
   * Adds to `stamps`, as `as`, the stamp of `repoPath` when an earlier lookup of this scan
   * found it unchanged: the entry's numbers, which its lstat then equalled.
   */
  stampHit(repoPath: string, stamps: FileStamps, as: string): void {
    const entry = this.entryOf(repoPath);
    if (entry === undefined || this.hits[entry] === 0) return;
    const at = entry * STAT_FIELDS;
    const known = this.known.stats;
    stamps.add(as, known[at] as number, known[at + 1] as number, known[at + 2] as number);
  }

  private entryOf(repoPath: string): number | undefined {
    const paths = this.known.paths;
    if (paths[this.cursor] === repoPath) return this.cursor++;
    // `hit`, then `lookup` or `stampHit`, of one path ask for the same entry twice in a row.
    if (this.cursor > 0 && paths[this.cursor - 1] === repoPath) return this.cursor - 1;
    // Between the two entries around the cursor in order (git's runs are sorted): a file
    // the cache does not hold, such as a new or changed one. Were the order to mislead
    // (UTF-16 against git's bytes, for characters beyond U+FFFF), the file would only be
    // hashed again.
    const previous = this.cursor > 0 ? paths[this.cursor - 1] : undefined;
    const next = paths[this.cursor];
    if ((previous === undefined || previous < repoPath) && (next === undefined || repoPath < next)) {
      return undefined;
    }
    if (this.byPath === null) {
      const byPath = new Map<string, number>();
      paths.forEach((knownPath, entry) => byPath.set(knownPath, entry));
      this.byPath = byPath;
    }
    const entry = this.byPath.get(repoPath);
    if (entry !== undefined) {
      this.cursor = entry + 1;
      this.outOfOrder = true;
    }
    return entry;
  }

  /**
   * Records the `<mode> <id>` a regular file was just hashed to under `stats`, unless it
   * changed too recently to vouch for it.
   */
  remember(repoPath: string, stats: Stats, value: string): void {
    if (Math.max(stats.mtimeMs, stats.ctimeMs) >= this.scanStartedMs - RACY_WINDOW_MS) return;
    this.added.paths.push(repoPath);
    this.added.values.push(value);
    this.added.stats.push(stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs);
  }

  /**
   * Writes what this scan found, when it differs from what was loaded: atomically (a
   * temporary file renamed into place), so a concurrent reader sees the old or the new
   * file, never half of one. A cache that cannot be written (a read-only checkout) only
   * makes the next scan hash again, so a failure here is not an error. Entries are
   * written in `order` (the paths as git listed them), then any others: the next scan
   * asks in that order.
   */
  async save(order: readonly string[] = []): Promise<void> {
    // An entry this scan did not find unchanged can only miss again (its file is gone or
    // has another stat now): left in place it costs the next scans an lstat each, while
    // rewriting the whole file costs a scan of a tree with one edited file more than its
    // edit. So the file is rewritten when the scan learnt something, and else only
    // once such stale entries pass a quarter of the rest.
    const stale = this.hits.length - this.hitCount;
    const learnt = this.added.paths.length > 0 || this.outOfOrder;
    if (this.file === null || (!learnt && stale * STALE_SHARE <= this.hitCount)) return;
    const kept = new Map<string, { value: string; stats: ArrayLike<number> }>();
    this.hits.forEach((hit, entry) => {
      if (hit === 0) return;
      kept.set(this.known.paths[entry] as string, {
        value: this.known.values[entry] as string,
        stats: this.known.stats.subarray(entry * STAT_FIELDS, (entry + 1) * STAT_FIELDS),
      });
    });
    this.added.paths.forEach((repoPath, i) =>
      kept.set(repoPath, {
        value: this.added.values[i] as string,
        stats: this.added.stats.slice(i * STAT_FIELDS, (i + 1) * STAT_FIELDS),
      }),
    );
    const paths = [...new Set([...order.filter((repoPath) => kept.has(repoPath)), ...kept.keys()])];
    const stats = new Float64Array(paths.length * STAT_FIELDS);
    paths.forEach((repoPath, i) => stats.set(kept.get(repoPath)?.stats ?? [], i * STAT_FIELDS));
    const bytes = statCacheBytes({
      objectFormat: this.objectFormat,
      paths,
      values: paths.map((repoPath) => kept.get(repoPath)?.value ?? ''),
      stats,
    });
    const temp = `${this.file}.${randomUUID()}.tmp`;
    try {
      await mkdir(path.dirname(this.file), { recursive: true });
      await writeFile(temp, bytes);
      await rename(temp, this.file);
    } catch {
      await rm(temp, { force: true }).catch(() => {});
    }
  }
}
