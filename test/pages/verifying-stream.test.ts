import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect, test } from 'vitest';
import { attachmentDisposition } from '../../app/pages/attachment-disposition.js';
import { OutCorruptError } from '../../app/pages/out-corrupt-error.js';
import { verifyingStream } from '../../app/pages/verifying-stream.js';
import { blobDigest } from '../../schemas/blob-digest.js';

const digestOf = (bytes: Buffer) => blobDigest(createHash('sha256').update(bytes).digest('hex'));

/** Pipes `chunks` through a verifying stream expecting `expected`; what came out, and how it ended. */
async function verify(chunks: Buffer[], expected: Buffer) {
  const passed: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      passed.push(chunk);
      callback();
    },
  });
  const error = await pipeline(
    Readable.from(chunks),
    verifyingStream(digestOf(expected), expected.length),
    sink,
  ).then(
    () => null,
    (failure: unknown) => failure,
  );
  return { passed: Buffer.concat(passed), error };
}

const bytes = Buffer.from('abcdefghij');
const chunks = [bytes.subarray(0, 4), bytes.subarray(4, 8), bytes.subarray(8)];

test.each([
  ['the exact bytes, in pieces', chunks, null],
  ['one byte changed', [chunks[0]!, chunks[1]!, Buffer.from('IJ')], 'bytes hashing to'],
  ['one byte too many', [...chunks, Buffer.from('k')], 'more than the 10 bytes'],
  ['one byte short', [chunks[0]!, chunks[1]!, Buffer.from('i')], '9 bytes, not the 10'],
])('%s', async (_name, given, failure) => {
  const { passed, error } = await verify(given, bytes);
  if (failure === null) {
    expect(error).toBeNull();
    expect(passed).toEqual(bytes);
    return;
  }
  expect(error).toBeInstanceOf(OutCorruptError);
  expect((error as OutCorruptError).message).toContain(failure);
  // The last piece is never let through unverified: the receiver holds less than it was promised.
  expect(passed.length).toBeLessThan(bytes.length);
});

test('an empty output passes nothing and verifies; a corrupt one fails before any byte', async () => {
  expect(await verify([], Buffer.alloc(0))).toEqual({ passed: Buffer.alloc(0), error: null });
  const { passed, error } = await verify([Buffer.from('x')], Buffer.alloc(0));
  expect(error).toBeInstanceOf(OutCorruptError);
  expect(passed.length).toBe(0);
});

test.each([
  ['model.bin', `attachment; filename="model.bin"; filename*=UTF-8''model.bin`],
  ['modèle (1).pt', `attachment; filename="mod_le (1).pt"; filename*=UTF-8''mod%C3%A8le%20%281%29.pt`],
  ['a"b\\c%d\r\n.txt', `attachment; filename="a_b_c_d__.txt"; filename*=UTF-8''a%22b%5Cc%25d%0D%0A.txt`],
])('the file name %j is saved by that name, and cannot end the header', (name, header) => {
  expect(attachmentDisposition(name)).toBe(header);
});
