import type { BlobDigest } from '../../schemas/blob-digest.js';

/** An upload whose bytes do not hash to the digest it was sent under; nothing was stored. */
export class BlobDigestMismatchError extends Error {
  constructor(
    readonly expected: BlobDigest,
    readonly actual: BlobDigest,
  ) {
    super(`The uploaded bytes hash to ${actual}, not ${expected}; nothing was stored`);
    this.name = 'BlobDigestMismatchError';
  }
}

/** An upload larger than the control plane accepts; nothing was stored. */
export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The upload is larger than this control plane accepts (${maxBytes} bytes; FLUKSIO_MAX_BLOB_SIZE)`);
    this.name = 'BlobTooLargeError';
  }
}

/** A presigned upload that is not what was promised (absent, another size, another checksum); nothing was kept. */
export class BlobUploadRejectedError extends Error {
  constructor(
    /** `absent`: nothing is at the upload's place (never uploaded, expired, or already finished). */
    readonly reason: 'absent' | 'size' | 'checksum',
    message: string,
  ) {
    super(message);
    this.name = 'BlobUploadRejectedError';
  }
}
