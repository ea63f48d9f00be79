import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { BlobCorruptError, BlobMissingError } from '../../runner/blobs/blob-errors.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';

let dir: string;
let store: DiskBlobStore;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-blobs-'));
  store = new DiskBlobStore(path.join(dir, 'store'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const hex = (bytes: string) => createHash('sha256').update(bytes).digest('hex');
const blobFile = (digest: string) => {
  const name = digest.slice('sha256:'.length);
  return path.join(dir, 'store', 'sha256', name.slice(0, 2), name);
};

describe('DiskBlobStore', () => {
  test('stores bytes and files under their sha256, laid out by the first two hex digits', async () => {
    const source = path.join(dir, 'model.bin');
    await writeFile(source, 'weights');
    const fromFile = await store.putFile(source);
    const fromBytes = await store.putBytes(Buffer.from('weights'));
    expect(fromFile).toEqual({ digest: `sha256:${hex('weights')}`, size: 7 });
    expect(fromBytes).toEqual(fromFile);
    expect(await readFile(blobFile(fromFile.digest), 'utf8')).toBe('weights');
    expect(await store.has(fromFile.digest)).toBe(true);
    expect(await readdir(path.join(dir, 'store', 'tmp'))).toEqual([]);
  });

  test('reads back verified bytes, to memory or to a file', async () => {
    const { digest } = await store.putBytes(Buffer.from('metrics'));
    expect((await store.getBytes(digest)).toString()).toBe('metrics');
    const dest = path.join(dir, 'out/deep/metrics.json');
    await store.getToFile(digest, dest);
    expect(await readFile(dest, 'utf8')).toBe('metrics');
  });

  test("tells a stored blob's size without reading it; null for one it does not have", async () => {
    const { digest } = await store.putBytes(Buffer.from('weights'));
    expect(await store.sizeOf(digest)).toBe(7);
    expect(await store.sizeOf(`sha256:${hex('never stored')}`)).toBeNull();
  });

  test('a blob it does not have is BlobMissingError', async () => {
    const digest = `sha256:${hex('never stored')}`;
    expect(await store.has(digest)).toBe(false);
    await expect(store.getBytes(digest)).rejects.toBeInstanceOf(BlobMissingError);
    await expect(store.getToFile(digest, path.join(dir, 'x'))).rejects.toBeInstanceOf(BlobMissingError);
  });

  test('survives a corrupted blob: the read throws, the blob is dropped, a new put repairs it', async () => {
    const { digest } = await store.putBytes(Buffer.from('good bytes'));
    await writeFile(blobFile(digest), 'evil bytes');
    const error = await store.getBytes(digest).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BlobCorruptError);
    expect((error as BlobCorruptError).actual).toBe(hex('evil bytes'));
    expect(await store.has(digest)).toBe(false);
    await store.putBytes(Buffer.from('good bytes'));
    expect((await store.getBytes(digest)).toString()).toBe('good bytes');
  });

  test('a blob of the wrong size is replaced by the next put', async () => {
    const { digest } = await store.putBytes(Buffer.from('complete'));
    await writeFile(blobFile(digest), 'compl');
    await store.putBytes(Buffer.from('complete'));
    expect((await store.getBytes(digest)).toString()).toBe('complete');
  });

  test('getToFile from a corrupt blob leaves the destination as it was and no temporary file', async () => {
    const { digest } = await store.putBytes(Buffer.from('new model'));
    await writeFile(blobFile(digest), 'new modem');
    const outDir = path.join(dir, 'out');
    const dest = path.join(outDir, 'model.bin');
    await store.getToFile((await store.putBytes(Buffer.from('old model'))).digest, dest);
    await expect(store.getToFile(digest, dest)).rejects.toBeInstanceOf(BlobCorruptError);
    expect(await readFile(dest, 'utf8')).toBe('old model');
    expect(await readdir(outDir)).toEqual(['model.bin']);
    await expect(store.getToFile(digest, path.join(outDir, 'fresh.bin'))).rejects.toBeInstanceOf(
      BlobMissingError,
    );
    expect(await readdir(outDir)).toEqual(['model.bin']);
  });

  test('refuses a digest that is not one, before touching the disk', async () => {
    await expect(store.getBytes('sha256:../../../etc/passwd')).rejects.toThrow(
      '"sha256:../../../etc/passwd" is not a blob digest',
    );
  });
});
