import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import { OutCorruptError } from './out-corrupt-error.js';

/**
 * A pass-through that hashes what flows through it and fails with OutCorruptError unless
 * it was exactly `size` bytes hashing to `expected`. It always holds back the last chunk
 * it was given until the end is verified: a response sent with a Content-Length never
 * receives all its bytes from a corrupt blob, so the client sees a failed download and
 * never a complete-looking corrupted file.
 */
export function verifyingStream(expected: BlobDigest, size: number): Transform {
  const hash = createHash('sha256');
  let seen = 0;
  let held: Buffer | null = null;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > size) {
        callback(new OutCorruptError(expected, `more than the ${size} bytes its run recorded`));
        return;
      }
      hash.update(chunk);
      const previous = held;
      held = chunk;
      callback(null, previous ?? undefined);
    },
    flush(callback) {
      const actual = blobDigest(hash.digest('hex'));
      if (seen !== size) callback(new OutCorruptError(expected, `${seen} bytes, not the ${size} recorded`));
      else if (actual !== expected) callback(new OutCorruptError(expected, `bytes hashing to ${actual}`));
      else callback(null, held ?? undefined);
    },
  });
}
