import { createHash, randomUUID, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobDigest, blobDigest } from '../../schemas/blob-digest.js';
import { sha256Hex } from '../../core/canonical-json.js';
import { BlobCorruptError, BlobMissingError } from './blob-errors.js';
import type { BlobStore, StoredBlob } from '../ports.js';

/**
 * A content-addressed blob store in a local directory, laid out as
 * `<root>/sha256/<first 2 hex>/<hex>`. Every write goes to a uniquely named file under
 * `<root>/tmp` and is renamed into place, so a crash never leaves a partial blob under a
 * digest's name, and concurrent writers of the same bytes do not interfere. Every read
 * is hashed on the way out; a blob whose bytes do not match is deleted, so the next put
 * of those bytes repairs the store. That check on read is also why writes are not fsynced:
 * a blob torn by a power loss is caught and dropped like any other corruption.
 */
export class DiskBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  async has(digest: BlobDigest): Promise<boolean> {
    return (await this.sizeOf(digest)) !== null;
  }

  /**
   * The stored blob's size in bytes, from the file system and without reading it; null when
   * it is not here. Lets a caller refuse a blob bigger than it may read before reading it.
   */
  async sizeOf(digest: BlobDigest): Promise<number | null> {
    const stats = await stat(this.blobPath(digest)).catch(() => null);
    return stats?.isFile() ? stats.size : null;
  }

  async putFile(source: string): Promise<StoredBlob> {
    const temp = await this.tempPath();
    const hashing = hashingStream();
    try {
      await pipeline(createReadStream(source), hashing.stream, createWriteStream(temp, { flags: 'wx' }));
      return await this.moveIntoPlace(temp, blobDigest(hashing.hash.digest('hex')), hashing.size());
    } finally {
      await rm(temp, { force: true });
    }
  }

  async putBytes(bytes: Uint8Array): Promise<StoredBlob> {
    const stored = { digest: blobDigest(sha256Hex(bytes)), size: bytes.byteLength };
    if (await this.holds(stored)) return stored;
    const temp = await this.tempPath();
    try {
      await writeFile(temp, bytes, { flag: 'wx' });
      return await this.moveIntoPlace(temp, stored.digest, stored.size);
    } finally {
      await rm(temp, { force: true });
    }
  }

  async getToFile(digest: BlobDigest, dest: string): Promise<void> {
    const source = this.blobPath(digest);
    const handle = await open(source).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobMissingError(digest) : error;
    });
    const input = handle.createReadStream();
    // Next to dest, so the final rename stays on one file system and is atomic.
    const temp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomUUID()}.fluksio-tmp`);
    const hashing = hashingStream();
    try {
      await mkdir(path.dirname(dest), { recursive: true });
      await pipeline(input, hashing.stream, createWriteStream(temp, { flags: 'wx' }));
      await this.verify(digest, hashing.hash.digest('hex'));
      await rename(temp, dest);
    } finally {
      input.destroy();
      await rm(temp, { force: true });
    }
  }

  /**
   * The stored bytes, unverified, for a caller that verifies them as they pass (the run
   * pages' downloads); null when the blob is not here.
   */
  async openRead(digest: BlobDigest): Promise<Readable | null> {
    const handle = await open(this.blobPath(digest)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    return handle?.createReadStream() ?? null;
  }

  async getBytes(digest: BlobDigest): Promise<Buffer> {
    const bytes = await readFile(this.blobPath(digest)).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? new BlobMissingError(digest) : error;
    });
    await this.verify(digest, sha256Hex(bytes));
    return bytes;
  }

  private blobPath(digest: BlobDigest): string {
    // The digest becomes a file name: anything but the exact format could climb out of root.
    if (!BlobDigest.safeParse(digest).success) {
      throw new Error(`"${digest}" is not a blob digest; expected "sha256:" and 64 lowercase hex digits`);
    }
    const hex = digest.slice('sha256:'.length);
    return path.join(this.root, 'sha256', hex.slice(0, 2), hex);
  }

  private async tempPath(): Promise<string> {
    const dir = path.join(this.root, 'tmp');
    await mkdir(dir, { recursive: true });
    return path.join(dir, randomUUID());
  }

  /** Whether the blob is present with the expected size: enough to skip rewriting it. */
  private async holds({ digest, size }: StoredBlob): Promise<boolean> {
    const stats = await stat(this.blobPath(digest)).catch(() => null);
    return stats !== null && stats.isFile() && stats.size === size;
  }

  private async moveIntoPlace(temp: string, digest: BlobDigest, size: number): Promise<StoredBlob> {
    const stored = { digest, size };
    if (await this.holds(stored)) return stored;
    const dest = this.blobPath(digest);
    await mkdir(path.dirname(dest), { recursive: true });
    await rename(temp, dest);
    return stored;
  }

  private async verify(digest: BlobDigest, actualHex: string): Promise<void> {
    if (blobDigest(actualHex) === digest) return;
    // Dropped so that storing the bytes again repairs the store. A concurrent put that just
    // repaired it loses its blob too; that only costs a later miss, never a wrong read.
    await rm(this.blobPath(digest), { force: true });
    throw new BlobCorruptError(digest, actualHex);
  }
}

/** A pass-through stream that hashes (sha256) and counts what flows through it. */
function hashingStream(): { stream: Transform; hash: Hash; size: () => number } {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  return { stream, hash, size: () => size };
}
