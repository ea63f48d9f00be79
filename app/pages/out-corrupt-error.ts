import type { BlobDigest } from '../../schemas/blob-digest.js';

/**
 * An output whose stored bytes are not those its run recorded, found while downloading
 * it: the download is aborted, and the route logs this.
 */
export class OutCorruptError extends Error {
  constructor(
    readonly expected: BlobDigest,
    /** What the stored bytes were found to be: their digest, or that there were more of them. */
    readonly found: string,
  ) {
    super(`The stored bytes of ${expected} are ${found}: the blob is corrupt, and the download was aborted`);
    this.name = 'OutCorruptError';
  }
}
