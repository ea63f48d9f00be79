import type { BlobDigest } from '../../schemas/blob-digest.js';
import { BlobMissingError } from './blob-errors.js';
import type { BlobStore, StoredBlob } from '../ports.js';

/**
 * A blob store that reads from `upper`, then `lower`, and writes only to `upper`. What
 * `fluksio verify` re-executes stores its outputs in a scratch store on top of the
 * project's, so it can restore cached bytes and compare fresh ones without adding a
 * byte to the project's store.
 */
export class OverlayBlobStore implements BlobStore {
  constructor(
    private readonly upper: BlobStore,
    private readonly lower: BlobStore,
  ) {}

  async has(digest: BlobDigest): Promise<boolean> {
    return (await this.upper.has(digest)) || this.lower.has(digest);
  }

  putFile(path: string): Promise<StoredBlob> {
    return this.upper.putFile(path);
  }

  putBytes(bytes: Uint8Array): Promise<StoredBlob> {
    return this.upper.putBytes(bytes);
  }

  async getToFile(digest: BlobDigest, dest: string, size?: number): Promise<void> {
    try {
      await this.upper.getToFile(digest, dest, size);
    } catch (error) {
      if (!(error instanceof BlobMissingError)) throw error;
      await this.lower.getToFile(digest, dest, size);
    }
  }

  async getBytes(digest: BlobDigest): Promise<Buffer> {
    try {
      return await this.upper.getBytes(digest);
    } catch (error) {
      if (!(error instanceof BlobMissingError)) throw error;
      return this.lower.getBytes(digest);
    }
  }
}
