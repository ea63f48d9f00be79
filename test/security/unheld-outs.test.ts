import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { DirectoryBlobStorage } from '../../app/blobs/directory-blob-storage.js';
import { readBlobManifest } from '../../app/blobs/read-blob-manifest.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { gcStore } from '../../store/blobs/gc-store.js';
import type { OutRecord } from '../../schemas/out-record.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';

/**
 * A stage's finish names its outputs by digest; the control plane must not take a name
 * for possession. A runner (of any tenant) that could record outs, a log or a directory
 * manifest its repository never stored would plant records nobody can pull, cache entries
 * whose hits restore nothing, another repository's blobs kept alive against its gc, and —
 * a directory out whose "manifest" is missing or not a manifest — a `fluksio gc` that
 * deletes no blob file ever again, for every tenant (gc fails safe on an unreadable one).
 */

const SECRET = 'private model weights of beta/secret';
const KEY = 'c'.repeat(64);

let database: TestDatabase;
let plane: TestControlPlane;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
});
afterEach(async () => {
  await plane.close();
});

function digestOf(bytes: string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

interface Held {
  token: string;
  claim: Claim;
  reader: string;
}

/** A started run of `repository`, held by a runner of its owner, and a read token of it. */
async function startedRun(repository: string, name: string): Promise<Held> {
  const submitter = await plane.addApiToken({ repositories: [repository] });
  const reader = await plane.addApiToken({ repositories: [repository], scope: 'read' });
  const runner = await plane.addRunner({ name, owner: repository.split('/')[0] });
  expect((await plane.submit(submitter, { repository })).status).toBe(201);
  const claim = await plane.claim(runner.token);
  if (!claim) throw new Error('nothing claimed');
  const start = await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
    token: runner.token,
    json: {
      lease: claim.lease,
      codeDigest: 'a'.repeat(64),
      envDigest: 'a'.repeat(64),
      ...ranAsClaimed(claim),
    },
  });
  expect(start.status).toBe(200);
  return { token: runner.token, claim, reader };
}

function leaseHeaders({ claim }: Held): Record<string, string> {
  return { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id };
}

async function put(held: Held, bytes: string): Promise<string> {
  const digest = digestOf(bytes);
  const answer = await plane.call('PUT', `/api/v1/blobs/${digest}`, {
    token: held.token,
    headers: { ...leaseHeaders(held), 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  expect(answer.status).toBe(201);
  return digest;
}

function keyInputs(): KeyInputs {
  return {
    version: CACHE_KEY_VERSION,
    template: 'python train.py',
    cmd: 'python train.py',
    deps: {},
    params: {},
    outs: ['model.bin'],
    metrics: [],
    code: null,
    env: {},
    interpreters: {},
    fingerprint: null,
    readSet: null,
    untraced: null,
  };
}

/** `held` reports a cacheable stage that ran and stored `outs` (and `logDigest`). */
function finish(held: Held, seq: number, outs: OutRecord[], logDigest: string | null = null) {
  const now = new Date().toISOString();
  const stage: StageRecord = {
    name: 'train',
    status: 'ran',
    cacheKey: KEY,
    keyInputs: keyInputs(),
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: [],
    startedAt: now,
    finishedAt: now,
    durationMs: 1,
    exitCode: 0,
    outs,
    metrics: {},
    logTail: '',
    logDigest,
    error: null,
    dirtyReasons: [],
    warnings: [],
    usage: null,
    pending: null,
    notes: [],
  };
  return plane.call('POST', `/api/v1/runs/${held.claim.run.id}/events`, {
    token: held.token,
    json: {
      lease: held.claim.lease,
      attempt: held.claim.run.attempt,
      events: [{ seq, type: 'stage.finished', stage }],
    },
  });
}

function lookup(held: Held) {
  return plane.call('GET', `/api/v1/runs/${held.claim.run.id}/cache/${KEY}`, {
    token: held.token,
    headers: { 'x-fluksio-lease': held.claim.lease },
  });
}

function manifestOf(files: { path: string; digest: string; size: number }[]): string {
  return JSON.stringify({ version: 1, files: files.map((file) => ({ ...file, executable: false })) });
}

describe('a stage finish that names blobs its repository never stored', () => {
  test("another repository's blob is refused, with no record, no cache entry and nothing to pull", async () => {
    const victim = await startedRun('beta/secret', 'beta-box');
    const secret = await put(victim, SECRET);
    const attacker = await startedRun('acme/model', 'acme-box');

    const out: OutRecord = { path: 'model.bin', kind: 'file', digest: secret, size: SECRET.length };
    const refused = await finish(attacker, 0, [out]);
    expect(refused.status).toBe(422);
    expect(refused.json.field).toBe('events[0].stage.outs[0].digest');
    expect(refused.json.error).toContain(`${secret} (out model.bin of stage train)`);
    expect(refused.json.error).toContain('acme/model holds no such blob');
    // Nothing of the batch applied: no cache entry, and the blob still opens nothing.
    expect((await lookup(attacker)).status).toBe(404);
    const pulled = await plane.call('GET', `/api/v1/blobs/${secret}?run=${attacker.claim.run.id}`, {
      token: attacker.reader,
    });
    expect(pulled.status).toBe(404);
  });

  test('a digest stored nowhere, as a file out or as the log, is refused', async () => {
    const held = await startedRun('acme/model', 'box');
    const nowhere = digestOf('never uploaded');
    const asOut = await finish(held, 0, [{ path: 'model.bin', kind: 'file', digest: nowhere, size: 14 }]);
    expect(asOut.status).toBe(422);
    const asLog = await finish(held, 0, [], nowhere);
    expect(asLog.status).toBe(422);
    expect(asLog.json.field).toBe('events[0].stage.logDigest');
    expect(asLog.json.error).toContain(`${nowhere} (the log of stage train)`);
    expect((await lookup(held)).status).toBe(404);
  });

  test('a file out at a size other than its blob is refused', async () => {
    const held = await startedRun('acme/model', 'box');
    const digest = await put(held, 'weights');
    const refused = await finish(held, 0, [{ path: 'model.bin', kind: 'file', digest, size: 1 }]);
    expect(refused.status).toBe(422);
    expect(refused.json.error).toContain('7 bytes, not the 1 the record says');
  });

  test('a directory out whose manifest is missing, not a manifest, or names blobs not held is refused', async () => {
    const held = await startedRun('acme/model', 'box');
    const stranger = await startedRun('beta/secret', 'beta-box');
    const secret = await put(stranger, SECRET);
    const notManifest = await put(held, 'just bytes');
    const stolen = await put(held, manifestOf([{ path: 'w.bin', digest: secret, size: SECRET.length }]));
    const cases: { digest: string; says: string }[] = [
      { digest: digestOf('no manifest'), says: 'acme/model holds no such blob' },
      { digest: notManifest, says: 'its manifest cannot be read: not JSON' },
      { digest: stolen, says: `${secret} (file w.bin of out feats of stage train)` },
    ];
    for (const { digest, says } of cases) {
      const refused = await finish(held, 0, [{ path: 'feats', kind: 'dir', digest, size: SECRET.length }]);
      expect(refused.status, says).toBe(422);
      expect(refused.json.error, says).toContain(says);
    }
    expect((await lookup(held)).status).toBe(404);
  });

  test("one tenant's directory out naming no manifest does not stop gc collecting everyone's blobs", async () => {
    const hostile = await startedRun('acme/model', 'box');
    const refused = await finish(hostile, 0, [
      { path: 'feats', kind: 'dir', digest: digestOf('no manifest here'), size: 0 },
    ]);
    expect(refused.status).toBe(422);
    const storage = new DirectoryBlobStorage(plane.blobsRoot);
    const gc = await gcStore({
      db: database.db,
      keepDays: 0,
      readManifest: (digest) => readBlobManifest(storage, digest as BlobDigest),
    });
    // An unreadable manifest would make `fluksio gc` delete no blob file at all.
    expect(gc.unreadableManifests).toEqual([]);
  });

  test('outs the repository holds, stored by an earlier run, are accepted without being sent again', async () => {
    const earlier = await startedRun('acme/model', 'box');
    const file = await put(earlier, 'weights');
    const manifest = await put(earlier, manifestOf([{ path: 'w.bin', digest: file, size: 7 }]));
    const log = await put(earlier, 'a log line\n');
    const held = await startedRun('acme/model', 'box-2');
    const outs: OutRecord[] = [
      { path: 'model.bin', kind: 'file', digest: file, size: 7 },
      { path: 'feats', kind: 'dir', digest: manifest, size: 7 },
    ];
    const accepted = await finish(held, 0, outs, log);
    expect(accepted.status, accepted.text).toBe(200);
    const entry = await lookup(held);
    expect(entry.status).toBe(200);
    expect(entry.json.outs).toEqual(outs);
  });
});
