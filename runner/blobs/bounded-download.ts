import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { BlobTooLargeError } from './blob-errors.js';

/**
 * The most bytes a blob read into memory (`getBytes`) may download: those are directory
 * manifests and stat lists, held whole. A file out is downloaded to disk and bounded by its
 * record's size instead.
 */
export const MAX_DOWNLOADED_BYTES = 64 * 1024 * 1024;

/** The blob a body is said to be and the most bytes it may have. */
export interface DownloadBound {
  digest: BlobDigest;
  limit: number;
}

/**
 * Writes a downloaded blob's body to `file` and returns the sha256 hex of what was written,
 * for the caller to check against the digest. The bytes are counted as they arrive and the
 * download stops with BlobTooLargeError before the chunk that passes `limit` is written: a
 * cache entry naming a huge or endless blob fills neither the disk nor memory. The caller
 * removes `file` when this throws.
 */
export async function writeBoundedBody(body: Readable, file: string, bound: DownloadBound): Promise<string> {
  const hashing = boundedHashing(bound);
  await pipeline(body, hashing.stream, createWriteStream(file));
  return hashing.hex();
}

/** The whole body in memory and its sha256 hex, stopped past `limit` as writeBoundedBody is. */
export async function readBoundedBody(
  body: Readable,
  bound: DownloadBound,
): Promise<{ bytes: Buffer; hex: string }> {
  const hashing = boundedHashing(bound);
  const chunks: Buffer[] = [];
  await pipeline(body, hashing.stream, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) chunks.push(chunk);
  });
  return { bytes: Buffer.concat(chunks), hex: hashing.hex() };
}

/** A pass-through that hashes what flows through it and errors before the chunk that passes the limit. */
function boundedHashing({ digest, limit }: DownloadBound): { stream: Transform; hex: () => string } {
  const hash = createHash('sha256');
  let received = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > limit) {
        callback(new BlobTooLargeError(digest, limit));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  return { stream, hex: () => hash.digest('hex') };
}
