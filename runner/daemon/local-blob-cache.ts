import { readdir, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { BlobCorruptError, BlobMissingError, BlobTooLargeError } from '../blobs/blob-errors.js';
import { DiskBlobStore } from '../blobs/disk-blob-store.js';
import type { StoredBlob } from '../ports.js';

export interface LocalBlobCacheOptions {
  /** The cache's directory (`<workDir>/blobs`). */
  root: string;
  /** The most bytes kept; past it, the least recently used blobs go. */
  maxBytes: number;
}

/**
 * A runner's local copy of blobs, shared by its slots: a DiskBlobStore (every read
 * verified) with a size cap and least-recently-used eviction. The order of use is kept
 * in memory and in the files' mtimes, which a hit refreshes, so it survives a restart.
 * A blob evicted while someone reads it is only a miss for that reader: the remote
 * store still has it.
 */
export class LocalBlobCache {
  readonly store: DiskBlobStore;
  /** digest → size, least recently used first. */
  private readonly entries = new Map<BlobDigest, number>();
  private total = 0;

  private constructor(private readonly options: LocalBlobCacheOptions) {
    this.store = new DiskBlobStore(options.root);
  }

  /** Opens the cache, reading what an earlier run of the runner left, oldest use first. */
  static async open(options: LocalBlobCacheOptions): Promise<LocalBlobCache> {
    if (!(options.maxBytes >= 0))
      throw new Error(`The blob cache size must be ≥ 0 bytes, not ${options.maxBytes}`);
    const cache = new LocalBlobCache(options);
    const found: { digest: BlobDigest; size: number; used: number }[] = [];
    const top = path.join(options.root, 'sha256');
    for (const prefix of await readdir(top).catch(() => [] as string[])) {
      for (const hex of await readdir(path.join(top, prefix)).catch(() => [] as string[])) {
        const stats = await stat(path.join(top, prefix, hex)).catch(() => null);
        if (stats?.isFile() && /^[0-9a-f]{64}$/.test(hex))
          found.push({ digest: `sha256:${hex}`, size: stats.size, used: stats.mtimeMs });
      }
    }
    for (const blob of found.sort((a, b) => a.used - b.used)) cache.record(blob.digest, blob.size);
    await cache.evict();
    return cache;
  }

  /** Bytes held now. */
  get size(): number {
    return this.total;
  }

  async putFile(source: string): Promise<StoredBlob> {
    return this.admitted(await this.store.putFile(source));
  }

  async putBytes(bytes: Uint8Array): Promise<StoredBlob> {
    return this.admitted(await this.store.putBytes(bytes));
  }

  /**
   * Writes the verified blob to `dest`; false when it is not here (or was corrupt, and is
   * dropped). BlobTooLargeError when it has more than `limit` bytes, as a download would be.
   */
  async getToFile(digest: BlobDigest, dest: string, limit = Number.POSITIVE_INFINITY): Promise<boolean> {
    const written = await this.hit(digest, limit, () => this.store.getToFile(digest, dest).then(() => true));
    return written ?? false;
  }

  /**
   * The verified bytes, or null when they are not here. BlobTooLargeError when there are
   * more than `limit`: checked before the file is read, since it is read whole.
   */
  async getBytes(digest: BlobDigest, limit = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
    return this.hit(digest, limit, () => this.store.getBytes(digest));
  }

  /**
   * A cached blob's bytes are those of its digest, but an entry may name a blob bigger than
   * its record says (a hostile or broken run): the record's size bounds the read here as it
   * bounds a download, so a stage is a miss on every runner, not only on those that have to
   * download it, and a manifest's digest naming a big file out is never read into memory.
   */
  private async hit<T>(digest: BlobDigest, limit: number, read: () => Promise<T>): Promise<T | null> {
    const size = this.entries.get(digest);
    if (size === undefined) return null;
    if (size > limit) throw new BlobTooLargeError(digest, limit);
    try {
      const result = await read();
      this.record(digest, size);
      await utimes(blobFile(this.options.root, digest), new Date(), new Date()).catch(() => undefined);
      return result;
    } catch (error) {
      if (!(error instanceof BlobMissingError || error instanceof BlobCorruptError)) throw error;
      this.forget(digest);
      return null;
    }
  }

  private async admitted(stored: StoredBlob): Promise<StoredBlob> {
    this.record(stored.digest, stored.size);
    await this.evict();
    return stored;
  }

  private record(digest: BlobDigest, size: number): void {
    this.forget(digest);
    this.entries.set(digest, size);
    this.total += size;
  }

  private forget(digest: BlobDigest): void {
    const size = this.entries.get(digest);
    if (size === undefined) return;
    this.entries.delete(digest);
    this.total -= size;
  }

  private async evict(): Promise<void> {
    for (const [digest] of this.entries) {
      if (this.total <= this.options.maxBytes) return;
      this.forget(digest);
      await rm(blobFile(this.options.root, digest), { force: true });
    }
  }
}

/** Where DiskBlobStore keeps a blob: `<root>/sha256/<first 2 hex>/<hex>` (its documented layout). */
export function blobFile(root: string, digest: BlobDigest): string {
  const hex = digest.slice('sha256:'.length);
  return path.join(root, 'sha256', hex.slice(0, 2), hex);
}
