import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ulid } from 'ulid';
import { CacheEntry } from '../../schemas/cache-entry.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import { manifestKeyOf } from '../../schemas/manifest-key.js';
import { CacheCandidates } from '../../schemas/protocol/cache-candidates.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import { PreviousStage } from '../../schemas/previous-stage.js';
import { createRun } from '../../store/create-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

const DIGEST = 'd'.repeat(64);

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

interface HeldRun {
  token: string;
  claim: Claim;
}

/** A started run of `repository` in `trustDomain`, held by a runner of its owner. */
async function startedRun(repository: string, trustDomain: string): Promise<HeldRun> {
  const runner = await plane.addRunner({
    name: `runner-${randomBytes(3).toString('hex')}`,
    owner: repository.split('/')[0],
  });
  await createRun({
    db: database.db,
    run: {
      id: ulid(),
      repository,
      pipelinePath: 'fluksio.yml',
      trustDomain,
      commit: COMMIT,
      params: {},
      paramsDigest: DIGEST,
      status: 'queued',
      cloneUrl: `https://github.com/${repository}.git`,
    },
  });
  const claim = await plane.claim(runner.token);
  if (!claim) throw new Error('nothing claimed');
  const start = await plane.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
    token: runner.token,
    json: { lease: claim.lease, codeDigest: DIGEST, envDigest: DIGEST, ...ranAsClaimed(claim) },
  });
  expect(start.status).toBe(200);
  return { token: runner.token, claim };
}

function makeInputs(): KeyInputs {
  return {
    version: CACHE_KEY_VERSION,
    template: 'python train.py',
    cmd: 'python train.py',
    deps: { 'train.py': DIGEST },
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

/** `held` reports a successful, cacheable stage with this key: the control plane writes the entry. */
async function cacheStage(held: HeldRun, key: string, overrides: Partial<KeyInputs> = {}): Promise<void> {
  const keyInputs: KeyInputs = {
    ...makeInputs(),
    ...overrides,
  };
  const now = new Date().toISOString();
  const answer = await plane.call('POST', `/api/v1/runs/${held.claim.run.id}/events`, {
    token: held.token,
    json: {
      lease: held.claim.lease,
      attempt: held.claim.run.attempt,
      events: [
        {
          seq: 0,
          type: 'stage.finished',
          stage: {
            name: 'train',
            status: 'ran',
            cacheKey: key,
            keyInputs,
            cachedFrom: null,
            reasons: [],
            startedAt: now,
            finishedAt: now,
            durationMs: 5,
            exitCode: 0,
            outs: [],
            metrics: { loss: 0.1 },
            logTail: '',
            logDigest: null,
            error: null,
          },
        },
      ],
    },
  });
  expect(answer.status).toBe(200);
}

async function lookup(
  held: HeldRun,
  key: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return plane.call('GET', `/api/v1/runs/${held.claim.run.id}/cache/${key}`, {
    token: held.token,
    headers: { 'x-fluksio-lease': held.claim.lease },
  });
}

describe('cache lookups', () => {
  const trustedKey = '1'.repeat(64);
  const forkKey = '2'.repeat(64);

  test("a fork PR's entry is never served to a trusted run; the fork's own PR reads both", async () => {
    await cacheStage(await startedRun('acme/model', 'trusted'), trustedKey);
    await cacheStage(await startedRun('acme/model', 'pr:7'), forkKey);

    const trusted = await startedRun('acme/model', 'trusted');
    const hit = await lookup(trusted, trustedKey);
    expect(hit.status).toBe(200);
    expect(CacheEntry.parse(hit.json)).toMatchObject({
      key: trustedKey,
      stage: 'train',
      metrics: { loss: 0.1 },
    });
    expect(await lookup(trusted, forkKey)).toMatchObject({ status: 404, json: { field: 'key' } });

    const samePr = await startedRun('acme/model', 'pr:7');
    expect((await lookup(samePr, trustedKey)).status).toBe(200);
    expect((await lookup(samePr, forkKey)).status).toBe(200);

    const otherPr = await startedRun('acme/model', 'pr:8');
    expect((await lookup(otherPr, trustedKey)).status).toBe(200);
    expect((await lookup(otherPr, forkKey)).status).toBe(404);
  });

  test("another repository's entry is never served", async () => {
    await cacheStage(await startedRun('acme/model', 'trusted'), trustedKey);
    const sibling = await startedRun('acme/other', 'trusted');
    expect((await lookup(sibling, trustedKey)).status).toBe(404);
    const stranger = await startedRun('globex/model', 'trusted');
    expect((await lookup(stranger, trustedKey)).status).toBe(404);
  });

  test('why a stage re-ran compares with the previous run of the pipeline the run may read', async () => {
    await cacheStage(await startedRun('acme/model', 'trusted'), '3'.repeat(64), { params: { lr: 1 } });
    const second = await startedRun('acme/model', 'trusted');
    await cacheStage(second, '4'.repeat(64), { params: { lr: 0.5 } });
    await cacheStage(await startedRun('acme/model', 'pr:7'), '5'.repeat(64), { params: { lr: 9 } });

    const trusted = await startedRun('acme/model', 'trusted');
    const previous = (stage: string) =>
      plane.call('GET', `/api/v1/runs/${trusted.claim.run.id}/cache?stage=${stage}`, {
        token: trusted.token,
        headers: { 'x-fluksio-lease': trusted.claim.lease },
      });
    const train = await previous('train');
    expect(train.status).toBe(200);
    expect(PreviousStage.parse(train.json)).toMatchObject({
      runId: second.claim.run.id,
      keyInputs: { params: { lr: 0.5 } },
    });
    expect(await previous('evaluate')).toMatchObject({ status: 404, json: { field: 'stage' } });
  });

  test('a lookup needs the lease header and a well-formed key', async () => {
    const held = await startedRun('acme/model', 'trusted');
    const noLease = await plane.call('GET', `/api/v1/runs/${held.claim.run.id}/cache/${trustedKey}`, {
      token: held.token,
    });
    expect(noLease).toMatchObject({ status: 400, json: { field: 'X-Fluksio-Lease' } });
    expect(await lookup(held, 'not-a-key')).toMatchObject({ status: 400, json: { field: 'key' } });
  });
});

describe('read-set candidates', () => {
  // Two traced executions of one stage with the same manifest, having read different code.
  const traced = (features: string): Partial<KeyInputs> => ({
    readSet: { files: { 'features.py': features }, dirs: {}, moduleDirs: {} },
  });
  const manifestKey = manifestKeyOf({ ...makeInputs(), readSet: null });

  async function candidates(held: HeldRun, key = manifestKey) {
    return plane.call('GET', `/api/v1/runs/${held.claim.run.id}/cache-candidates/${key}`, {
      token: held.token,
      headers: { 'x-fluksio-lease': held.claim.lease },
    });
  }
  const keysOf = (json: Record<string, unknown>) =>
    CacheCandidates.parse(json).entries.map((entry) => entry.keyInputs.readSet?.files['features.py']);

  test('a run reads the traced entries of its manifest key in its trust domains, newest first', async () => {
    await cacheStage(await startedRun('acme/model', 'trusted'), '3'.repeat(64), traced('old'));
    await cacheStage(await startedRun('acme/model', 'trusted'), '4'.repeat(64), traced('new'));
    await cacheStage(await startedRun('acme/model', 'pr:7'), '5'.repeat(64), traced('fork'));
    await cacheStage(await startedRun('acme/other', 'trusted'), '6'.repeat(64), traced('sibling'));
    await cacheStage(await startedRun('acme/model', 'trusted'), '7'.repeat(64));

    const trusted = await candidates(await startedRun('acme/model', 'trusted'));
    expect(trusted.status).toBe(200);
    expect(keysOf(trusted.json)).toEqual(['new', 'old']);
    expect(keysOf((await candidates(await startedRun('acme/model', 'pr:7'))).json)).toEqual([
      'fork',
      'new',
      'old',
    ]);
    expect(keysOf((await candidates(await startedRun('acme/model', 'pr:8'))).json)).toEqual(['new', 'old']);
    expect(keysOf((await candidates(await startedRun('globex/model', 'trusted'))).json)).toEqual([]);
  });

  test('a malformed manifest key is refused, naming the field', async () => {
    const held = await startedRun('acme/model', 'trusted');
    expect(await candidates(held, 'nope')).toMatchObject({ status: 400, json: { field: 'manifestKey' } });
  });
});
