import type { BlobDigest } from '../../schemas/blob-digest.js';

/** A blob the store does not have. Restoring from the cache treats this as a miss. */
export class BlobMissingError extends Error {
  constructor(readonly digest: BlobDigest) {
    super(`Blob ${digest} is not in the store`);
    this.name = 'BlobMissingError';
  }
}

/** A blob whose bytes do not hash to its name. Restoring treats this as a miss, too. */
export class BlobCorruptError extends Error {
  constructor(
    readonly digest: BlobDigest,
    readonly actual: string,
  ) {
    super(`Blob ${digest} is corrupt: its bytes hash to sha256:${actual}`);
    this.name = 'BlobCorruptError';
  }
}

/**
 * A blob with more bytes than it may have (its out's recorded size, or the most read into
 * memory): a download stops there, and a local copy is not read. Restoring treats this as a miss, too.
 */
export class BlobTooLargeError extends Error {
  constructor(
    readonly digest: BlobDigest,
    readonly limit: number,
  ) {
    super(`Blob ${digest} has more than the ${limit} bytes expected; it was not restored`);
    this.name = 'BlobTooLargeError';
  }
}
