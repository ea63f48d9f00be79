import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
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

/** A file's blob id with the stat it was read under: `[inode, size, mtimeMs, ctimeMs, id]`. */
type StatCacheEntry = [number, number, number, number, string];

/** What a stat cache file held, as loaded; null when there was none or it could not be trusted. */
export interface LoadedStatCache {
  objectFormat: GitObjectFormat;
  entries: Map<string, StatCacheEntry>;
}

/** The first element of the file's array: its layout, then the object format its ids are in. */
const HEADER = 'fluksio-stat-cache 1';

/** Elements per file in the array: path, inode, size, mtimeMs, ctimeMs, blob id. */
const STRIDE = 6;

/**
 * Reads a stat cache file: a line with the sha256 of the rest, then one JSON array, the
 * header and then six elements per file. A missing, unreadable, truncated or altered
 * file, or one of another layout, gives null: a cache that cannot be trusted is only a
 * slower read, never a wrong id. (Checked element by element rather than by a zod
 * schema: compiling one for 5,000 tuples costs a fresh process more than the reads the
 * cache saves.)
 */
export async function loadStatCache(file: string): Promise<LoadedStatCache | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
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
  const idPattern = objectFormat === 'sha1' ? /^[0-9a-f]{40}$/ : /^[0-9a-f]{64}$/;
  const entries = new Map<string, StatCacheEntry>();
  for (let i = 1; i < array.length; i += STRIDE) {
    const [repoPath, ino, size, mtimeMs, ctimeMs, id] = array.slice(i, i + STRIDE) as unknown[];
    const numbers = [ino, size, mtimeMs, ctimeMs];
    if (typeof repoPath !== 'string' || typeof id !== 'string' || !idPattern.test(id)) return null;
    if (!numbers.every((value) => typeof value === 'number')) return null;
    entries.set(repoPath, [...(numbers as [number, number, number, number]), id]);
  }
  return { objectFormat, entries };
}

/**
 * The blob ids of working-tree files, each trusted while the file's inode, size, mtime
 * and ctime are still those it was hashed under; git's own index is not asked, so
 * `core.trustctime`, `core.checkStat` or an index refreshed by someone else change
 * nothing. One scan's lookups and new ids become the next file on `save`: entries of
 * files no longer seen are dropped.
 */
export class StatCache {
  private readonly known: Map<string, StatCacheEntry>;
  private readonly kept = new Map<string, StatCacheEntry>();
  private added = false;

  /**
   * @param file where `save` writes; null keeps nothing between scans.
   * @param scanStartedMs `Date.now()` before the first file of the scan was read.
   */
  constructor(
    private readonly file: string | null,
    private readonly objectFormat: GitObjectFormat,
    loaded: LoadedStatCache | null,
    private readonly scanStartedMs: number,
  ) {
    this.known = loaded?.objectFormat === objectFormat ? loaded.entries : new Map();
  }

  /** The id recorded for `repoPath` when its stat still matches; null otherwise. */
  lookup(repoPath: string, stats: Stats): string | null {
    const entry = this.known.get(repoPath);
    if (
      entry === undefined ||
      entry[0] !== stats.ino ||
      entry[1] !== stats.size ||
      entry[2] !== stats.mtimeMs ||
      entry[3] !== stats.ctimeMs
    ) {
      return null;
    }
    this.kept.set(repoPath, entry);
    return entry[4];
  }

  /** Records the id a file was just hashed to, unless it changed too recently to vouch for it. */
  remember(repoPath: string, stats: Stats, id: string): void {
    if (Math.max(stats.mtimeMs, stats.ctimeMs) >= this.scanStartedMs - RACY_WINDOW_MS) return;
    this.kept.set(repoPath, [stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs, id]);
    this.added = true;
  }

  /**
   * Writes what this scan found, when it differs from what was loaded: atomically (a
   * temporary file renamed into place), so a concurrent reader sees the old or the new
   * file, never half of one. A cache that cannot be written (a read-only checkout) only
   * makes the next scan hash again, so a failure here is not an error.
   */
  async save(): Promise<void> {
    if (this.file === null || (!this.added && this.kept.size === this.known.size)) return;
    const array: (string | number)[] = [`${HEADER} ${this.objectFormat}`];
    for (const [repoPath, entry] of this.kept) array.push(repoPath, ...entry);
    const body = JSON.stringify(array);
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
