import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { TeamCacheClient } from '../../client/team-cache-client.js';
import { manifestKeyOf } from '../../core/manifest-key.js';
import { TeamBlobStore } from '../../cli/remote/team-blob-store.js';
import { openLocalState } from '../../local/local-state.js';
import { blobDigest, type BlobDigest } from '../../schemas/blob-digest.js';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import { BlobTooLargeError } from '../../runner/blobs/blob-errors.js';
import { MAX_DOWNLOADED_BYTES } from '../../runner/blobs/bounded-download.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import { blobFile } from '../../runner/daemon/local-blob-cache.js';
import { ML_FILES, makeMlProject } from '../helpers/ml-project.js';
import { runJson, stageOf, statuses } from '../helpers/run-cli.js';

const SLOW = 120_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function digestOf(bytes: Buffer): BlobDigest {
  return blobDigest(createHash('sha256').update(bytes).digest('hex'));
}

/**
 * A control plane answering the team-cache and blob routes with whatever the test put in
 * `entries` and `blobs` (a blob of `flood` is an endless body). Real HTTP: the laptop's
 * client parses and validates its answers as it would any control plane's.
 */
async function fakeControlPlane() {
  const entries: CacheEntry[] = [];
  const blobs = new Map<string, Buffer | 'flood'>();
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://control-plane');
    const parts = url.pathname.split('/').slice(3).map(decodeURIComponent);
    if (parts[0] === 'team-cache' && parts.length === 1)
      return json(res, 200, { repository: 'acme/ml', trustedEntries: entries.length });
    if (parts[0] === 'team-cache' && parts[1] === 'candidates')
      return json(res, 200, {
        entries: entries.filter((entry) => manifestKeyOf(entry.keyInputs) === parts[2]),
      });
    if (parts[0] === 'team-cache') {
      const entry = entries.find((each) => each.key === parts[1]);
      return entry ? json(res, 200, { entry, points: [] }) : json(res, 404, { error: 'no entry' });
    }
    const blob = parts[0] === 'blobs' ? blobs.get(parts[1] ?? '') : undefined;
    if (blob === undefined) return json(res, 404, { error: 'no blob' });
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') return res.end();
    if (blob !== 'flood') return res.end(blob);
    const chunk = Buffer.alloc(64 * 1024, 0x78);
    const more = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', more);
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, entries, blobs };
}

/** A project run once here: its stages' cache entries, and its outs' bytes by digest. */
async function computedElsewhere(): Promise<{ entries: CacheEntry[]; blobs: Map<string, Buffer> }> {
  const repo = await makeMlProject();
  cleanups.push(() => repo.cleanup());
  const run = await runJson([], { cwd: repo.dir, env: { DEVICE: 'cpu' } });
  expect(statuses(run.report)).toEqual({ prepare: 'ran', train: 'ran', evaluate: 'ran' });
  const state = await openLocalState(join(repo.dir, '.fluksio'));
  const entries: CacheEntry[] = [];
  try {
    for (const stage of run.report.stages) {
      const indexed = await state.index.cacheEntry(stage.cacheKey ?? '');
      if (!indexed) throw new Error(`${stage.name} has no cache entry`);
      entries.push(indexed.entry);
    }
  } finally {
    await state.close();
  }
  const blobs = new Map<string, Buffer>();
  for (const out of entries.flatMap((entry) => entry.outs)) {
    blobs.set(out.digest, await readFile(join(repo.dir, out.path)));
  }
  return { entries, blobs };
}

describe('an entry of the team cache whose outs are not those its key declares', { timeout: SLOW }, () => {
  test('is a miss with a warning naming its stage: the file it names is untouched and the stage runs', async () => {
    const team = await computedElsewhere();
    const plane = await fakeControlPlane();
    for (const [digest, bytes] of team.blobs) plane.blobs.set(digest, bytes);
    const evil = Buffer.from('import os\nos.system("echo owned > owned.txt")\n');
    plane.blobs.set(digestOf(evil), evil);
    for (const entry of team.entries) {
      // train's key inputs are its own (so its key holds), its outs say evaluate.py.
      const outs =
        entry.stage === 'train'
          ? entry.outs.map((out) =>
              out.path === 'model.txt'
                ? { path: 'evaluate.py', kind: 'file' as const, digest: digestOf(evil), size: evil.length }
                : out,
            )
          : entry.outs;
      plane.entries.push({ ...entry, outs });
    }

    const laptop = await makeMlProject();
    cleanups.push(() => laptop.cleanup());
    await laptop.git('remote', 'add', 'origin', 'https://github.com/acme/ml.git');
    const run = await runJson(['--remote-cache'], {
      cwd: laptop.dir,
      env: { DEVICE: 'cpu', FLUKSIO_URL: plane.url, FLUKSIO_TOKEN: 'fxt_test' },
    });

    expect(run.code, run.stderr).toBe(0);
    // prepare's honest entry is taken from the same control plane: it answers as one should.
    expect(stageOf(run.report, 'prepare').status).toBe('cached');
    expect(stageOf(run.report, 'train').status).toBe('ran');
    expect(await readFile(join(laptop.dir, 'evaluate.py'), 'utf8')).toBe(ML_FILES['evaluate.py']);
    expect(await readdir(laptop.dir)).not.toContain('owned.txt');
    expect(run.stderr).toContain(`the team's cache entry of stage "train"`);
    expect(run.stderr).toContain('"evaluate.py"');

    // Nothing of it reached the local index: run again without the team, train is this run's.
    const again = await runJson([], { cwd: laptop.dir, env: { DEVICE: 'cpu' } });
    expect(stageOf(again.report, 'train')).toMatchObject({ status: 'cached', cachedFrom: run.report.run.id });
  });
});

/** A laptop's TeamBlobStore over a fake control plane and a fresh local store. */
async function store(options: { maxBytesInMemory?: number } = {}) {
  const plane = await fakeControlPlane();
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-team-blob-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const client = new TeamCacheClient({
    url: plane.url,
    token: 'fxt_test',
    repository: 'acme/ml',
    retries: 0,
  });
  const local = new DiskBlobStore(join(dir, 'store'));
  const blobs = new TeamBlobStore({ client, runId: 'run-1', local, ...options });
  return { plane, dir, blobs, local };
}

describe('a team blob that sends more bytes than it may have', () => {
  test("is stopped past its out's size and is a miss: nothing is written", async () => {
    const { plane, dir, blobs, local } = await store();
    const honest = Buffer.from('model weights\n');
    plane.blobs.set(digestOf(honest), honest);
    const flooding = digestOf(Buffer.from('what the record says'));
    plane.blobs.set(flooding, 'flood');

    await blobs.getToFile(digestOf(honest), join(dir, 'out', 'model.txt'), honest.length);
    expect(await readFile(join(dir, 'out', 'model.txt'))).toEqual(honest);

    const error = await blobs.getToFile(flooding, join(dir, 'out', 'big.bin'), 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect(await readdir(join(dir, 'out'))).toEqual(['model.txt']);
    expect(await local.has(flooding)).toBe(false);
    expect(await local.has(digestOf(honest))).toBe(true);
  });

  test('read into memory (a directory manifest) is stopped past the cap', async () => {
    const { plane, blobs, local } = await store();
    const flooding = digestOf(Buffer.from('{"version":1,"files":[]}'));
    plane.blobs.set(flooding, 'flood');
    const error = await blobs.getBytes(flooding).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect((error as BlobTooLargeError).limit).toBe(MAX_DOWNLOADED_BYTES);
    expect(await local.has(flooding)).toBe(false);
  });
});

describe('a team blob already in the local store with more bytes than it may have', () => {
  test("is refused past its out's size before it is read, a miss: nothing is written; at the size it is restored", async () => {
    const { dir, blobs, local } = await store();
    const weights = Buffer.from('a big file out of some other stage\n');
    const { digest } = await local.putBytes(weights);

    const error = await blobs
      .getToFile(digest, join(dir, 'out', 'model.txt'), weights.length - 1)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect((error as BlobTooLargeError).limit).toBe(weights.length - 1);
    expect(await readdir(join(dir, 'out')).catch(() => [])).toEqual([]);

    await blobs.getToFile(digest, join(dir, 'out', 'model.txt'), weights.length);
    expect(await readFile(join(dir, 'out', 'model.txt'))).toEqual(weights);
  });

  test('read into memory is refused past the cap without being read; at the cap it is read', async () => {
    const cap = 1024;
    const { dir, blobs, local } = await store({ maxBytesInMemory: cap });
    const atCap = await local.putBytes(Buffer.alloc(cap, 0x61));
    const pastCap = await local.putBytes(Buffer.alloc(cap + 1, 0x62));
    // Other bytes of the same length under its name: reading them would be BlobCorruptError
    // and would delete the file, so its staying proves the refusal came first.
    await writeFile(blobFile(join(dir, 'store'), pastCap.digest), Buffer.alloc(cap + 1, 0x63));

    const error = await blobs.getBytes(pastCap.digest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobTooLargeError);
    expect((error as BlobTooLargeError).limit).toBe(cap);
    expect(await local.sizeOf(pastCap.digest)).toBe(cap + 1);

    expect(await blobs.getBytes(atCap.digest)).toEqual(Buffer.alloc(cap, 0x61));
  });
});
