import type { ServerResponse } from 'node:http';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { attachmentDisposition } from './attachment-disposition.js';
import type { StoredOut } from './page-source.js';
import { verifyingStream } from './verifying-stream.js';

/**
 * Streams an output's blob as a download (Content-Length, and the out's file name in
 * Content-Disposition), verifying its digest on the way. On a mismatch the response is
 * destroyed before its last bytes (see verifyingStream): the client's download fails,
 * and `onError` is told. Headers are only set, not sent, before the first verified
 * bytes: a corrupt empty file ends the connection without any answer.
 */
export async function sendVerifiedOut({
  response,
  out,
  digest,
  body,
  onError,
}: {
  response: ServerResponse;
  out: StoredOut;
  digest: BlobDigest;
  body: Readable;
  /** An OutCorruptError, or the store failing mid-read; not the client going away. */
  onError(error: unknown): void;
}): Promise<void> {
  response.statusCode = 200;
  response.setHeader('content-type', 'application/octet-stream');
  response.setHeader('content-length', out.size);
  response.setHeader('content-disposition', attachmentDisposition(posix.basename(out.path)));
  response.setHeader('x-content-type-options', 'nosniff');
  // What only some may read is not for a shared cache.
  response.setHeader('cache-control', 'private, no-store');
  try {
    await pipeline(body, verifyingStream(digest, out.size), response);
  } catch (error) {
    // The response is destroyed either way: an incomplete download is all the client sees.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') onError(error);
  }
}
