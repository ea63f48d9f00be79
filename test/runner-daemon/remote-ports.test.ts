import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { RunLease } from '../../client/run-lease.js';
import { StaleLeaseError } from '../../client/control-plane-errors.js';
import { LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { RemoteBlobStore } from '../../runner/daemon/remote-blob-store.js';
import { RemoteEventSink } from '../../runner/daemon/remote-event-sink.js';
import { RemoteStageCache } from '../../runner/daemon/remote-stage-cache.js';
import { BlobCorruptError, BlobMissingError, BlobTooLargeError } from '../../runner/blobs/blob-errors.js';
import { MAX_DOWNLOADED_BYTES } from '../../runner/blobs/bounded-download.js';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';

let plane: FakeControlPlane;
let dir: string;
let run: RunLease;
let client: ControlPlaneClient;
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-ports-'));
  client = new ControlPlaneClient({
    url: plane.url,
    token: plane.token,
    retries: 2,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 100,
  });
  const { claim } = plane.enqueue(makeClaim({ repoDir: dir, commit: 'a'.repeat(40) }));
  await client.claim(0, false);
  run = { runId: claim.run.id, lease: claim.lease };
});
afterEach(async () => {
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
});

const logLine = (stage: string, line: string) => ({ type: 'stage.log' as const, stage, lines: [line] });

describe('events go up merged, in order, each once', () => {
  test('consecutive log lines and metric points travel as one event each', async () => {
    const sink = new RemoteEventSink({ client, run, attempt: 1 });
    sink.emit({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
    for (let step = 0; step < 100; step += 1) {
      sink.emit(logLine('train', `step ${step}`));
      sink.emit({
        type: 'metric.points',
        points: [{ name: 'loss', step, value: 1 / (step + 1), stage: 'train' }],
      });
    }
    for (let line = 0; line < 50; line += 1) sink.emit(logLine('train', `line ${line}`));
    sink.emit(logLine('eval', 'other stage'));
    await sink.flush();
    const events = plane.eventsOf(run.runId);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
    const lines = events.flatMap((event) => (event.type === 'stage.log' ? event.lines : []));
    expect(lines).toHaveLength(151);
    expect(lines.at(-1)).toBe('other stage');
    expect(
      events
        .filter((event) => event.type === 'metric.points')
        .flatMap((event) => (event.type === 'metric.points' ? event.points : [])),
    ).toHaveLength(100);
    expect(events.length).toBeLessThan(210);
  });

  test('while the control plane is down events wait, and once it is back each arrives exactly once', async () => {
    const sink = new RemoteEventSink({ client, run, attempt: 1, mergeDelayMs: 5 });
    await plane.stop();
    for (let line = 0; line < 20; line += 1) {
      sink.emit(logLine('train', `line ${line}`));
      sink.emit({ type: 'stage.started', stage: `s${line}`, at: new Date().toISOString() });
    }
    const flushed = sink.flush();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await plane.start();
    await flushed;
    const events = plane.eventsOf(run.runId);
    expect(events.filter((event) => event.type === 'stage.started')).toHaveLength(20);
    expect(events.flatMap((event) => (event.type === 'stage.log' ? event.lines : []))).toEqual(
      Array.from({ length: 20 }, (_, line) => `line ${line}`),
    );
  });

  test('while the control plane is down events past the memory bound wait on disk, and arrive once each, in order', async () => {
    const spool = path.join(dir, 'events.jsonl');
    const sink = new RemoteEventSink({
      client,
      run,
      attempt: 1,
      mergeDelayMs: 5,
      spool: { file: spool, maxMemoryBytes: 4 * 1024 },
    });
    await plane.stop();
    const stages = Array.from({ length: 3000 }, (_, index) => `stage-${index}`);
    for (const stage of stages) sink.emit({ type: 'stage.started', stage, at: new Date().toISOString() });
    const flushed = sink.flush();
    // ~100 bytes an event: all but the first few dozen are on disk, not in memory.
    const spooled = (await readFile(spool, 'utf8')).trim().split('\n');
    expect(spooled.length).toBeGreaterThan(2900);
    expect(JSON.parse(spooled.at(-1) ?? '{}')).toMatchObject({ seq: 2999, stage: 'stage-2999' });
    await plane.start();
    await flushed;
    const events = plane.eventsOf(run.runId);
    expect(events.map((event) => event.seq)).toEqual(stages.map((_, index) => index));
    expect(events.map((event) => (event.type === 'stage.started' ? event.stage : null))).toEqual(stages);
    await expect(readFile(spool)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a lost lease ends the deliveries with a StaleLeaseError', async () => {
    const sink = new RemoteEventSink({ client, run: { ...run, lease: 'e'.repeat(64) }, attempt: 1 });
    sink.emit({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
    await expect(sink.flush()).rejects.toBeInstanceOf(StaleLeaseError);
  });
});

describe('blobs go through the local cache to the control plane', () => {
  test('a put uploads once and streams a file; a read is verified and then served locally', async () => {
    const cache = await LocalBlobCache.open({ root: path.join(dir, 'blobs'), maxBytes: 1 << 20 });
    const store = new RemoteBlobStore({ client, run, cache });
    const file = path.join(dir, 'model.bin');
    const model = Buffer.alloc(300_000, 3);
    await writeFile(file, model);
    const stored = await store.putFile(file);
    await store.putFile(file);
    expect(plane.requests.filter((request) => request.line.startsWith('PUT'))).toHaveLength(1);
    // Buffer.equals: a deep toEqual over 300 kB takes seconds.
    expect(plane.blobs.get(stored.digest)?.equals(model)).toBe(true);

    // Another runner: nothing local, so it downloads, verifies and keeps the bytes.
    const otherCache = await LocalBlobCache.open({ root: path.join(dir, 'other-blobs'), maxBytes: 1 << 20 });
    const other = new RemoteBlobStore({ client, run, cache: otherCache });
    await other.getToFile(stored.digest, path.join(dir, 'restored', 'model.bin'));
    expect((await readFile(path.join(dir, 'restored', 'model.bin'))).equals(model)).toBe(true);
    const gets = () =>
      plane.requests.filter((request) => request.line.startsWith('GET /api/v1/blobs')).length;
    expect(gets()).toBe(1);
    expect((await other.getBytes(stored.digest)).equals(model)).toBe(true);
    expect(gets()).toBe(1);
  });

  test('a read served locally confirms the blob with the control plane, and sends it again when the control plane lost it', async () => {
    const cache = await LocalBlobCache.open({ root: path.join(dir, 'blobs'), maxBytes: 1 << 20 });
    const store = new RemoteBlobStore({ client, run, cache });
    const stored = await store.putBytes(Buffer.from('weights'));
    const heads = () =>
      plane.requests.filter((request) => request.line.startsWith(`HEAD /api/v1/blobs/${stored.digest}`))
        .length;
    const before = heads();
    expect((await store.getBytes(stored.digest)).toString()).toBe('weights');
    expect(heads()).toBe(before + 1);

    // Collected since (gc): the run about to name it sends it back from its verified copy.
    plane.blobs.delete(stored.digest);
    await store.getToFile(stored.digest, path.join(dir, 'restored', 'weights'), 7);
    expect(await readFile(path.join(dir, 'restored', 'weights'), 'utf8')).toBe('weights');
    expect(plane.blobs.get(stored.digest)?.toString()).toBe('weights');
    expect(plane.requests.filter((request) => request.line.startsWith('GET /api/v1/blobs'))).toHaveLength(0);
  });

  test('bytes that do not match their digest are BlobCorruptError, absent ones BlobMissingError', async () => {
    const cache = await LocalBlobCache.open({ root: path.join(dir, 'blobs'), maxBytes: 1 << 20 });
    const store = new RemoteBlobStore({ client, run, cache });
    const digest = `sha256:${createHash('sha256').update('the real bytes').digest('hex')}` as const;
    await expect(store.getBytes(digest)).rejects.toBeInstanceOf(BlobMissingError);
    plane.blobs.set(digest, Buffer.from('something else'));
    await expect(store.getBytes(digest)).rejects.toBeInstanceOf(BlobCorruptError);
    await expect(store.getToFile(digest, path.join(dir, 'x'))).rejects.toBeInstanceOf(BlobCorruptError);
    expect(cache.size).toBe(0);
  });
});

describe('a blob that sends more bytes than it may have is stopped as they arrive', () => {
  /** Far more than a stopped download lets through (the socket's buffers hold a few MiB). */
  const HUGE = 256 * 1024 * 1024;
  const digestOf = (bytes: Buffer): BlobDigest =>
    blobDigest(createHash('sha256').update(bytes).digest('hex'));
  const gets = () => plane.requests.filter((request) => request.line.startsWith('GET /api/v1/blobs')).length;
  async function runnerStore(options: { maxBytesInMemory?: number } = {}) {
    const cache = await LocalBlobCache.open({ root: path.join(dir, 'blobs'), maxBytes: 1 << 20 });
    return { cache, store: new RemoteBlobStore({ client, run, cache, ...options }) };
  }

  test("a download past the out's size is BlobTooLargeError: nothing at dest, no temp file, nothing cached", async () => {
    const { cache, store } = await runnerStore();
    const weights = Buffer.alloc(1000, 7);
    plane.blobs.set(digestOf(weights), weights);
    const huge = digestOf(Buffer.from('what the record says'));
    const hugeBody = plane.generateBlob(huge, HUGE);
    const out = path.join(dir, 'out');

    for (const digest of [digestOf(weights), huge]) {
      const error = await store.getToFile(digest, path.join(out, 'model.bin'), 999).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlobTooLargeError);
      expect(error).toMatchObject({ digest, limit: 999 });
    }
    expect(hugeBody.sent()).toBeLessThan(HUGE / 4);
    expect(await readdir(out)).toEqual([]);
    expect(cache.size).toBe(0);
    expect(await cache.store.has(digestOf(weights))).toBe(false);

    // Exactly the size it says: restored, and kept.
    await store.getToFile(digestOf(weights), path.join(out, 'model.bin'), 1000);
    expect((await readFile(path.join(out, 'model.bin'))).equals(weights)).toBe(true);
    expect(await readdir(out)).toEqual(['model.bin']);
    expect(cache.size).toBe(1000);
  });

  test('a read into memory past its cap is BlobTooLargeError, nothing cached; exactly at the cap it is read', async () => {
    const { cache, store } = await runnerStore({ maxBytesInMemory: 1024 });
    const atCap = Buffer.alloc(1024, 1);
    const overCap = Buffer.alloc(1025, 2);
    for (const bytes of [atCap, overCap]) plane.blobs.set(digestOf(bytes), bytes);
    const huge = digestOf(Buffer.from('{"version":1,"files":[]}'));
    const hugeBody = plane.generateBlob(huge, HUGE);

    for (const digest of [digestOf(overCap), huge]) {
      const error = await store.getBytes(digest).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BlobTooLargeError);
      expect(error).toMatchObject({ digest, limit: 1024 });
    }
    expect(hugeBody.sent()).toBeLessThan(HUGE / 4);
    expect(cache.size).toBe(0);
    expect((await store.getBytes(digestOf(atCap))).equals(atCap)).toBe(true);
    expect(cache.size).toBe(1024);
  });

  test('by default a read into memory stops past MAX_DOWNLOADED_BYTES (64 MiB)', async () => {
    const { cache, store } = await runnerStore();
    const manifest = digestOf(Buffer.from('{"version":1,"files":[]}'));
    plane.generateBlob(manifest, MAX_DOWNLOADED_BYTES + 1);
    const error = await store.getBytes(manifest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect((error as BlobTooLargeError).limit).toBe(MAX_DOWNLOADED_BYTES);
    expect(cache.size).toBe(0);
  });

  test('a blob the local cache holds is bounded the same way, before a byte of it is read', async () => {
    const { cache, store } = await runnerStore({ maxBytesInMemory: 1024 });
    const weights = Buffer.alloc(2000, 3);
    const { digest } = await cache.putBytes(weights);
    const out = path.join(dir, 'out');

    const error = await store.getToFile(digest, path.join(out, 'model.bin'), 1999).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect(error).toMatchObject({ digest, limit: 1999 });
    await expect(store.getBytes(digest)).rejects.toMatchObject({ name: 'BlobTooLargeError', limit: 1024 });
    expect(await readdir(out).catch(() => [])).toEqual([]);
    expect(gets()).toBe(0);

    // Still in the cache, and restored when the record's size is its own.
    await store.getToFile(digest, path.join(out, 'model.bin'), 2000);
    expect((await readFile(path.join(out, 'model.bin'))).equals(weights)).toBe(true);
    expect(gets()).toBe(0);
  });
});

describe('the remote stage cache', () => {
  test('a cache that cannot answer is a miss', async () => {
    const errors: unknown[] = [];
    const cache = new RemoteStageCache({ client, run, onError: (error) => errors.push(error) });
    expect(await cache.lookup('a'.repeat(64))).toBeNull();
    expect(errors).toEqual([]);
    await plane.stop();
    expect(await cache.lookup('a'.repeat(64))).toBeNull();
    expect(errors).toHaveLength(1);
  });
});
