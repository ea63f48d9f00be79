import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../schemas/canonical-json.js';
import { STAT_CACHE_VERSION, StatCacheFile, type StatCacheEntry } from '../schemas/stat-cache-file.js';
import type { GitObjectFormat } from './git-blob-id.js';

/**
 * How long after a file was last written or changed its content id stays unsaved. A
 * timestamp only proves that nothing changed if a later write would get another one: an
 * edit within the same clock tick as the read ("racy git") keeps mtime, ctime and maybe
 * size. Kernels stamp files with a coarse clock, some filesystems count whole seconds
 * (FAT two), so an entry is kept only once its file is this much older than the read.
 */
export const RACY_WINDOW_MS = 2000;

/** What a stat cache file held, as loaded; null when there was none or it could not be trusted. */
export interface LoadedStatCache {
  objectFormat: GitObjectFormat;
  entries: Map<string, StatCacheEntry>;
}

/**
 * Reads a stat cache file. A missing, unreadable, truncated or altered file (its first
 * line is the sha256 of the rest) or one of another layout gives null: a cache that
 * cannot be trusted is only a slower read, never a wrong id.
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
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  const parsed = StatCacheFile.safeParse(json);
  if (!parsed.success) return null;
  return {
    objectFormat: parsed.data.objectFormat,
    entries: new Map(parsed.data.entries.map((entry) => [entry[0], entry])),
  };
}

/**
 * The blob ids of working-tree files, each trusted while the file's inode, size, mtime
 * and ctime are still those it was hashed under; git's own index is not asked, so
 * `core.trustctime`, `core.checkStat` or an index refreshed by someone else change
 * nothing. One scan's lookups and new ids become the next file on `save`: entries of
 * files no longer seen are dropped.
 */
export class StatCache {
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

  private readonly known: Map<string, StatCacheEntry>;

  /** The id recorded for `repoPath` when its stat still matches; null otherwise. */
  lookup(repoPath: string, stats: Stats): string | null {
    const entry = this.known.get(repoPath);
    if (
      entry === undefined ||
      entry[1] !== stats.ino ||
      entry[2] !== stats.size ||
      entry[3] !== stats.mtimeMs ||
      entry[4] !== stats.ctimeMs
    ) {
      return null;
    }
    this.kept.set(repoPath, entry);
    return entry[5];
  }

  /** Records the id a file was just hashed to, unless it changed too recently to vouch for it. */
  remember(repoPath: string, stats: Stats, id: string): void {
    if (Math.max(stats.mtimeMs, stats.ctimeMs) >= this.scanStartedMs - RACY_WINDOW_MS) return;
    this.kept.set(repoPath, [repoPath, stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs, id]);
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
    const content: StatCacheFile = {
      version: STAT_CACHE_VERSION,
      objectFormat: this.objectFormat,
      entries: [...this.kept.values()],
    };
    const body = JSON.stringify(content);
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
