import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { blobFile, LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fluksio-blob-cache-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const bytes = (fill: number, size = 100) => Buffer.alloc(size, fill);

describe('the runner’s local blob cache', () => {
  test('past its cap the least recently used blobs go, and a read counts as a use', async () => {
    const cache = await LocalBlobCache.open({ root, maxBytes: 300 });
    const a = await cache.putBytes(bytes(1));
    const b = await cache.putBytes(bytes(2));
    const c = await cache.putBytes(bytes(3));
    expect(await cache.getBytes(a.digest)).toEqual(bytes(1));
    const d = await cache.putBytes(bytes(4));
    expect(cache.size).toBe(300);
    expect(await cache.getBytes(b.digest)).toBeNull();
    for (const kept of [a, c, d]) expect(await cache.getBytes(kept.digest)).not.toBeNull();
    expect(existsSync(blobFile(root, b.digest))).toBe(false);
  });

  test('reopened, it knows what it holds and in which order it was used', async () => {
    const first = await LocalBlobCache.open({ root, maxBytes: 1000 });
    const a = await first.putBytes(bytes(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const b = await first.putBytes(bytes(2));
    const reopened = await LocalBlobCache.open({ root, maxBytes: 150 });
    expect(reopened.size).toBe(100);
    expect(await reopened.getBytes(a.digest)).toBeNull();
    expect(await reopened.getBytes(b.digest)).toEqual(bytes(2));
  });

  test('a corrupt blob is a miss, dropped from the cache', async () => {
    const cache = await LocalBlobCache.open({ root, maxBytes: 1000 });
    const a = await cache.putBytes(bytes(1));
    await writeFile(blobFile(root, a.digest), bytes(9));
    expect(await cache.getToFile(a.digest, path.join(root, 'out.bin'))).toBe(false);
    expect(cache.size).toBe(0);
  });

  test('blobs sit where DiskBlobStore puts them (the layout eviction relies on)', async () => {
    const stored = await new DiskBlobStore(root).putBytes(bytes(5));
    expect(await readFile(blobFile(root, stored.digest))).toEqual(bytes(5));
  });
});
