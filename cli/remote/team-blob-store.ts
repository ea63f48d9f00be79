import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import type { TeamCacheClient } from '../../client/team-cache-client.js';
import { NotFoundError } from '../../client/control-plane-errors.js';
import { BlobCorruptError, BlobMissingError, BlobTooLargeError } from '../../runner/blobs/blob-errors.js';
import {
  MAX_DOWNLOADED_BYTES,
  readBoundedBody,
  writeBoundedBody,
} from '../../runner/blobs/bounded-download.js';
import type { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import type { BlobStore, StoredBlob } from '../../runner/ports.js';

export interface TeamBlobStoreOptions {
  client: TeamCacheClient;
  /** The team's run whose outs are restored: the control plane lets its repository's readers read them. */
  runId: string;
  /** This workspace's own store: read first, and where downloaded bytes are kept. */
  local: DiskBlobStore;
  /**
   * The most bytes `getBytes` reads into memory (directory manifests, stat lists), from the
   * local store or downloaded; past it the read is BlobTooLargeError, a miss.
   * @defaultValue MAX_DOWNLOADED_BYTES (64 MiB)
   */
  maxBytesInMemory?: number;
}

/**
 * The outs of one team's cache entry, as the engine restores them (`fluksio run
 * --remote-cache`): from the local store when it has the bytes, else downloaded through the
 * control plane's blob route with the API token (or the store's presigned URL), hashed as
 * they arrive and checked against their digest before anything uses them — a blob absent
 * is BlobMissingError, bytes that hash elsewhere BlobCorruptError, more bytes than expected
 * (the out's size, or maxBytesInMemory) BlobTooLargeError, stopped as they arrive — and
 * each is a miss: the stage runs. The same bounds hold for a blob the local store has, checked
 * before it is read. Verified bytes are kept in the local store. Writes go to the local store
 * only: what a laptop computes never reaches the team's cache.
 */
export class TeamBlobStore implements BlobStore {
  constructor(private readonly options: TeamBlobStoreOptions) {}

  async has(digest: BlobDigest): Promise<boolean> {
    return (await this.options.local.has(digest)) || this.options.client.hasBlob(this.options.runId, digest);
  }

  putFile(source: string): Promise<StoredBlob> {
    return this.options.local.putFile(source);
  }

  putBytes(bytes: Uint8Array): Promise<StoredBlob> {
    return this.options.local.putBytes(bytes);
  }

  async getToFile(digest: BlobDigest, dest: string, size?: number): Promise<void> {
    const { local } = this.options;
    const limit = size ?? Number.POSITIVE_INFINITY;
    if (await this.heldLocally(digest, limit)) return local.getToFile(digest, dest);
    await mkdir(path.dirname(dest), { recursive: true });
    // Next to dest, so the final rename stays on one file system and is atomic.
    const temp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomUUID()}.fluksio-tmp`);
    try {
      const hex = await this.download(digest, (body) => writeBoundedBody(body, temp, { digest, limit }));
      verify(digest, hex);
      await local.putFile(temp);
      await rename(temp, dest);
    } finally {
      await rm(temp, { force: true });
    }
  }

  async getBytes(digest: BlobDigest): Promise<Buffer> {
    const { local } = this.options;
    const limit = this.options.maxBytesInMemory ?? MAX_DOWNLOADED_BYTES;
    if (await this.heldLocally(digest, limit)) return local.getBytes(digest);
    const { bytes, hex } = await this.download(digest, (body) => readBoundedBody(body, { digest, limit }));
    verify(digest, hex);
    await local.putBytes(bytes);
    return bytes;
  }

  /**
   * Whether the local store has the blob; BlobTooLargeError when it has more than `limit`
   * bytes. A cache entry's outs are named by digest, but its record may understate a blob
   * that happens to be here (a big file out named as a directory manifest, or a size the
   * entry's run got wrong): checked before the file is read, as LocalBlobCache checks a
   * runner's, so the stage is a miss on every laptop, not only on those that download it,
   * and a big file is never read into memory.
   */
  private async heldLocally(digest: BlobDigest, limit: number): Promise<boolean> {
    const size = await this.options.local.sizeOf(digest);
    if (size === null) return false;
    if (size > limit) throw new BlobTooLargeError(digest, limit);
    return true;
  }

  /** The blob's body into `consume`; BlobMissingError when the control plane has none the token may read. */
  private async download<T>(digest: BlobDigest, consume: (body: Readable) => Promise<T>): Promise<T> {
    try {
      return await this.options.client.blob(this.options.runId, digest, consume);
    } catch (error) {
      if (error instanceof NotFoundError) throw new BlobMissingError(digest);
      throw error;
    }
  }
}

/** BlobCorruptError unless the bytes hashed to `digest`. */
function verify(digest: BlobDigest, actualHex: string): void {
  if (blobDigest(actualHex) !== digest) throw new BlobCorruptError(digest, actualHex);
}
