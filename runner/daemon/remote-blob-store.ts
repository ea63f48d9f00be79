import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import { BlobCorruptError, BlobMissingError } from '../blobs/blob-errors.js';
import { MAX_DOWNLOADED_BYTES, readBoundedBody, writeBoundedBody } from '../blobs/bounded-download.js';
import type { BlobStore, StoredBlob } from '../ports.js';
import type { BlobBody } from '../../client/blob-body.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import type { LocalBlobCache } from './local-blob-cache.js';

export interface RemoteBlobStoreOptions {
  client: ControlPlaneClient;
  /** The run whose lease the blob requests carry (reads are scoped to its repository). */
  run: RunLease;
  /** The runner's local cache, shared by its slots. */
  cache: LocalBlobCache;
  /** Stops transfers when the run's lease is gone. */
  signal?: AbortSignal;
  /**
   * Until this signal ends (the run is stopped: cancelled, given back, its lease lost), an
   * upload the control plane cannot take (unreachable, 5xx) is tried again without limit,
   * as the run's events are: an outage of the control plane must not fail a stage that
   * ran, and lose its outs. Without it, the client's retry budget. @defaultValue none
   */
  persist?: AbortSignal;
  /**
   * The most bytes `getBytes` reads into memory (directory manifests, stat lists); past
   * it the read is BlobTooLargeError, a miss.
   * @defaultValue MAX_DOWNLOADED_BYTES (64 MiB)
   */
  maxBytesInMemory?: number;
}

/**
 * The control plane's blob store (`HEAD|GET|PUT /api/v1/blobs/sha256:<hex>`) behind the
 * runner's local cache. A put keeps the bytes locally and uploads them unless the
 * control plane has them already (a file is streamed from disk, never read whole); a
 * read is served locally when it can be (after a HEAD that tells the control plane the
 * run relies on it), else downloaded, verified against its digest and kept. Absent is BlobMissingError, bytes that do not match are BlobCorruptError, and
 * more bytes than expected (the out's size, or maxBytesInMemory for a read into memory)
 * BlobTooLargeError, stopped as they arrive — each a miss: the stage runs again. A blob found
 * corrupt is uploaded again when the run stores its bytes, even though the control plane
 * says it has it: its store cannot always tell (an S3 store that keeps no checksum).
 */
export class RemoteBlobStore implements BlobStore {
  /** Blobs whose download hashed to something else, in this run. */
  private readonly corrupt = new Set<BlobDigest>();

  constructor(private readonly options: RemoteBlobStoreOptions) {}

  has(digest: BlobDigest): Promise<boolean> {
    return this.options.client.hasBlob(this.options.run, digest, this.call());
  }

  async putFile(source: string): Promise<StoredBlob> {
    const stored = await this.options.cache.putFile(source);
    await this.upload(stored, { open: () => createReadStream(source), size: stored.size });
    return stored;
  }

  async putBytes(bytes: Uint8Array): Promise<StoredBlob> {
    const stored = await this.options.cache.putBytes(bytes);
    await this.upload(stored, { bytes });
    return stored;
  }

  async getToFile(digest: BlobDigest, dest: string, size?: number): Promise<void> {
    const limit = size ?? Number.POSITIVE_INFINITY;
    if (await this.options.cache.getToFile(digest, dest, limit)) {
      const bytes = await stat(dest);
      await this.holdRemotely(
        { digest, size: bytes.size },
        { open: () => createReadStream(dest), size: bytes.size },
      );
      return;
    }
    await mkdir(path.dirname(dest), { recursive: true });
    // Next to dest, so the final rename stays on one file system and is atomic.
    const temp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomUUID()}.fluksio-tmp`);
    try {
      const hex = await this.options.client.getBlob(
        this.options.run,
        digest,
        (body) => writeBoundedBody(body, temp, { digest, limit }),
        this.call(),
      );
      this.verify(digest, hex);
      await this.options.cache.putFile(temp).catch(() => undefined);
      await rename(temp, dest);
    } finally {
      await rm(temp, { force: true });
    }
  }

  async getBytes(digest: BlobDigest): Promise<Buffer> {
    const limit = this.options.maxBytesInMemory ?? MAX_DOWNLOADED_BYTES;
    const local = await this.options.cache.getBytes(digest, limit);
    if (local) {
      await this.holdRemotely({ digest, size: local.byteLength }, { bytes: local });
      return local;
    }
    const body = await this.options.client.getBlob(
      this.options.run,
      digest,
      (stream) => readBoundedBody(stream, { digest, limit }),
      this.call(),
    );
    this.verify(digest, body?.hex ?? null);
    const verified = (body as { bytes: Buffer }).bytes;
    await this.options.cache.putBytes(verified).catch(() => undefined);
    return verified;
  }

  private async upload(stored: StoredBlob, body: BlobBody): Promise<void> {
    const { client, run, persist } = this.options;
    const call = { ...this.call(), ...(persist ? { persist } : {}) };
    const mend = this.corrupt.has(stored.digest);
    // A blob held at another size (a file a crash cut short) is sent again too.
    if (!mend && (await client.storedBlobSize(run, stored.digest, call)) === stored.size) return;
    await client.putBlob(run, stored.digest, body, call);
    this.corrupt.delete(stored.digest);
  }

  /**
   * A blob served from the local cache is one the run is about to name, yet no request
   * told the control plane so: its HEAD confirms the ref (so `fluksio gc` keeps the blob
   * while the run runs), and a blob it no longer holds (collected since the cache entry
   * was read), or holds at another size, is sent again from these verified bytes. Without this, a run restored from
   * the runner's cache could succeed naming outs nobody can pull.
   */
  private async holdRemotely(stored: StoredBlob, body: BlobBody): Promise<void> {
    const { client, run } = this.options;
    if ((await client.storedBlobSize(run, stored.digest, this.call())) === stored.size) return;
    await client.putBlob(run, stored.digest, body, this.call());
  }

  /** Throws BlobMissingError for null (404) and BlobCorruptError for bytes hashing elsewhere. */
  private verify(digest: BlobDigest, actualHex: string | null): void {
    if (actualHex === null) throw new BlobMissingError(digest);
    if (blobDigest(actualHex) !== digest) {
      this.corrupt.add(digest);
      throw new BlobCorruptError(digest, actualHex);
    }
  }

  private call(): { signal?: AbortSignal } {
    return this.options.signal ? { signal: this.options.signal } : {};
  }
}
