import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { BlobMissingError } from '../../runner/blobs/blob-errors.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import { OverlayBlobStore } from '../../runner/blobs/overlay-blob-store.js';

let dir: string;
let upper: DiskBlobStore;
let lower: DiskBlobStore;
let overlay: OverlayBlobStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-overlay-'));
  upper = new DiskBlobStore(join(dir, 'upper'));
  lower = new DiskBlobStore(join(dir, 'lower'));
  overlay = new OverlayBlobStore(upper, lower);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('writes go to the upper store only; reads find either', async () => {
  const below = await lower.putBytes(Buffer.from('cached'));
  const above = await overlay.putBytes(Buffer.from('fresh'));
  expect(await upper.has(above.digest)).toBe(true);
  expect(await lower.has(above.digest)).toBe(false);
  expect((await overlay.getBytes(below.digest)).toString()).toBe('cached');
  expect((await overlay.getBytes(above.digest)).toString()).toBe('fresh');
  expect(await overlay.has(below.digest)).toBe(true);
  const dest = join(dir, 'restored');
  await overlay.getToFile(below.digest, dest);
  expect(await readFile(dest, 'utf8')).toBe('cached');
});

test('a blob in neither store is missing', async () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  await expect(overlay.getBytes(digest)).rejects.toBeInstanceOf(BlobMissingError);
  await expect(overlay.getToFile(digest, join(dir, 'x'))).rejects.toBeInstanceOf(BlobMissingError);
  expect(await overlay.has(digest)).toBe(false);
});
