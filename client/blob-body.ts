import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

/** A blob upload's bytes, opened anew for each attempt. */
export type BlobBody = { bytes: Uint8Array } | { open(): Readable; size: number };

/** The bytes as the HTTP layer sends them: as they are, or the file's stream opened anew. */
export function bodyOf(body: BlobBody): { data: Uint8Array | WebReadableStream<Uint8Array>; size: number } {
  return 'bytes' in body
    ? { data: body.bytes, size: body.bytes.byteLength }
    : { data: Readable.toWeb(body.open()) as WebReadableStream<Uint8Array>, size: body.size };
}
