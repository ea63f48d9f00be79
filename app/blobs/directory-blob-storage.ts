import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobDigest, blobDigest } from '../../schemas/blob-digest.js';
import { STORE_ID_NAME, type BlobStorage, type ProxiedBlobTransfers } from './blob-storage.js';
import { BlobDigestMismatchError, BlobTooLargeError } from './blob-upload-errors.js';

/**
 * The control plane's blob store in a directory (a local disk or a shared filesystem):
 * `<root>/sha256/<first 2 hex>/<hex>`, bytes passing through the control plane. An upload
 * streams into a uniquely named file under `<root>/tmp` while it is hashed and counted,
 * and is renamed into place only when its bytes hash to the digest it was sent under: a
 * failed or lying upload leaves nothing behind (DESIGN §10). A blob is durable before it
 * is answered stored: its file is synced before the rename and its directory after, so a
 * power loss never leaves an empty or truncated file under a digest a cache hit names.
 */
export class DirectoryBlobStorage implements BlobStorage {
  readonly transfers: ProxiedBlobTransfers = {
    via: 'control-plane',
    read: (digest) => this.read(digest),
    write: (digest, body, maxBytes) => this.write(digest, body, maxBytes),
  };

  constructor(readonly root: string) {}

  get location(): string {
    return this.root;
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  async readStoreId(): Promise<string | null> {
    try {
      return (await readFile(path.join(this.root, STORE_ID_NAME), 'utf8')).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async writeStoreId(storeId: string): Promise<void> {
    // Whole or not at all: a reader never sees half an id.
    const temp = path.join(this.root, `${STORE_ID_NAME}.${randomUUID()}`);
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(`${storeId}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path.join(this.root, STORE_ID_NAME));
    await syncDirectory(this.root);
  }

  /** The size of a stored blob, or null when it is not here. */
  async size(digest: BlobDigest): Promise<number | null> {
    const stats = await stat(this.blobPath(digest)).catch(() => null);
    return stats?.isFile() ? stats.size : null;
  }

  async readSmall(digest: BlobDigest, maxBytes: number): Promise<Buffer | null> {
    const size = await this.size(digest);
    if (size === null || size > maxBytes) return null;
    return readFile(this.blobPath(digest)).catch(() => null);
  }

  async openRead(digest: BlobDigest): Promise<Readable> {
    return this.read(digest);
  }

  /** The blob's bytes; the caller checked that it exists (a vanished file raises ENOENT). */
  read(digest: BlobDigest): ReadStream {
    return createReadStream(this.blobPath(digest));
  }

  /**
   * Stores what `body` carries under `digest` once verified. Rejects with
   * BlobDigestMismatchError when the bytes hash to something else and BlobTooLargeError
   * past `maxBytes`; either way nothing is stored. Returns the size.
   */
  async write(digest: BlobDigest, body: Readable, maxBytes: number): Promise<number> {
    const dest = this.blobPath(digest);
    const tempDir = path.join(this.root, 'tmp');
    await mkdir(tempDir, { recursive: true });
    const temp = path.join(tempDir, randomUUID());
    const hash = createHash('sha256');
    let size = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > maxBytes) {
          callback(new BlobTooLargeError(maxBytes));
          return;
        }
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      // `flush`: the file is synced before it is closed, so its bytes reach the disk before
      // the rename names them (else a power loss could leave the name on an empty or
      // truncated file).
      await pipeline(body, counting, createWriteStream(temp, { flags: 'wx', flush: true }));
      const actual = blobDigest(hash.digest('hex'));
      if (actual !== digest) throw new BlobDigestMismatchError(digest, actual);
      // Always over a file already there: its size says nothing of its bytes (bit rot, a
      // disk that lied), and a runner uploads a blob again precisely when it read it damaged
      // (RemoteBlobStore), so keeping the old file would keep the damage for good. The
      // rename is atomic (a reader has the old file or this one, whole), and the new file's
      // mtime is now, so `fluksio gc` (which deletes unnamed files older than its cut-off)
      // sees it as just uploaded.
      const created = await mkdir(path.dirname(dest), { recursive: true });
      await rename(temp, dest);
      // The rename (and any directory made for it) reaches the disk before "stored" is answered.
      await syncDirectory(path.dirname(dest));
      if (created !== undefined) {
        for (let dir = path.dirname(dest); dir !== path.dirname(created); dir = path.dirname(dir)) {
          await syncDirectory(path.dirname(dir));
        }
      }
      return size;
    } finally {
      await rm(temp, { force: true });
    }
  }

  private blobPath(digest: BlobDigest): string {
    // The digest becomes a file name: anything but the exact format could climb out of root.
    if (!BlobDigest.safeParse(digest).success) throw new Error(`"${digest}" is not a blob digest`);
    const hex = digest.slice('sha256:'.length);
    return path.join(this.root, 'sha256', hex.slice(0, 2), hex);
  }
}

/** Syncs a directory, so the entries just made or renamed in it survive a power loss. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
