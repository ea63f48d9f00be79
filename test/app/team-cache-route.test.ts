import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ulid } from 'ulid';
import { manifestKeyOf } from '../../core/manifest-key.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import { CacheCandidates } from '../../schemas/protocol/cache-candidates.js';
import { TeamCacheHit } from '../../schemas/protocol/team-cache-hit.js';
import { TeamCacheReach } from '../../schemas/protocol/team-cache-reach.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { cacheKeyOf } from '../../runner/keys/cache-key.js';
import { createRun } from '../../store/runs/create-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';

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

function inputs(cmd: string, readSet: KeyInputs['readSet'] = null): KeyInputs {
  return {
    version: CACHE_KEY_VERSION,
    template: cmd,
    cmd,
    deps: {},
    params: {},
    outs: ['model.bin'],
    metrics: [],
    code: null,
    env: {},
    interpreters: {},
    fingerprint: null,
    readSet,
    untraced: null,
  };
}

/** A finished run of `repository` in `trustDomain` whose stage `train` made the entry of `keyInputs`. */
async function entryOf(repository: string, trustDomain: string, keyInputs: KeyInputs): Promise<string> {
  const runId = ulid();
  await createRun({
    db: database.db,
    run: {
      id: runId,
      repository,
      pipelinePath: 'fluksio.yml',
      trustDomain,
      commit: COMMIT,
      params: {},
      paramsDigest: DIGEST,
      status: 'succeeded',
      cloneUrl: `https://github.com/${repository}.git`,
    },
  });
  const key = cacheKeyOf(keyInputs);
  await database.db.insert(cacheEntries).values({
    repository,
    trustDomain,
    key,
    stage: 'train',
    runId,
    outs: [{ path: 'model.bin', kind: 'file', digest: `sha256:${DIGEST}`, size: 1 }],
    metrics: { loss: 0.5 },
    keyInputs,
    manifestKey: keyInputs.readSet ? manifestKeyOf(keyInputs) : null,
  });
  await database.db.insert(metricPoints).values([
    { runId, stage: 'train', name: 'loss', step: 1, value: 0.5, at: 1_700_000_000_000 },
    { runId, stage: 'train', name: 'loss', step: 0, value: 1, at: null },
  ]);
  return key;
}

const query = (repository: string) => `repository=${encodeURIComponent(repository)}`;

test("a read token gets its repository's trusted entries with their series; never a fork's, never another repository's", async () => {
  const token = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
  const trusted = await entryOf('acme/model', 'trusted', inputs('python train.py'));
  const fork = await entryOf('acme/model', 'pr:7', inputs('python train.py --fork'));
  const elsewhere = await entryOf('acme/other', 'trusted', inputs('python train.py --other'));

  const hit = await plane.call('GET', `/api/v1/team-cache/${trusted}?${query('acme/model')}`, { token });
  expect(hit.status).toBe(200);
  const parsed = TeamCacheHit.parse(hit.json);
  expect(parsed.entry).toMatchObject({ key: trusted, stage: 'train', metrics: { loss: 0.5 } });
  expect(parsed.points).toEqual([
    { stage: 'train', name: 'loss', step: 0, value: 1 },
    { stage: 'train', name: 'loss', step: 1, value: 0.5, at: 1_700_000_000_000 },
  ]);

  const fromFork = await plane.call('GET', `/api/v1/team-cache/${fork}?${query('acme/model')}`, { token });
  expect(fromFork.status).toBe(404);
  expect(fromFork.json).toMatchObject({ error: `No trusted cache entry of acme/model has key ${fork}` });
  const other = await plane.call('GET', `/api/v1/team-cache/${elsewhere}?${query('acme/model')}`, { token });
  expect(other.status).toBe(404);
  const unreached = await plane.call('GET', `/api/v1/team-cache/${elsewhere}?${query('acme/other')}`, {
    token,
  });
  expect(unreached.status).toBe(403);
  expect(String(unreached.json.error)).toContain('does not reach acme/other');

  const reach = await plane.call('GET', `/api/v1/team-cache?${query('acme/model')}`, { token });
  expect(TeamCacheReach.parse(reach.json)).toEqual({ repository: 'acme/model', trustedEntries: 1 });
});

test("a traced stage's candidates are the trusted entries of its manifest key, newest first", async () => {
  const token = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
  const readSet = (digest: string) => ({ files: { 'train.py': digest }, dirs: {}, moduleDirs: {} });
  const older = await entryOf('acme/model', 'trusted', inputs('python train.py', readSet('a')));
  const newer = await entryOf('acme/model', 'trusted', inputs('python train.py', readSet('b')));
  await entryOf('acme/model', 'pr:3', inputs('python train.py', readSet('c')));
  const manifestKey = manifestKeyOf(inputs('python train.py', readSet('a')));

  const answer = await plane.call(
    'GET',
    `/api/v1/team-cache/candidates/${manifestKey}?${query('acme/model')}`,
    {
      token,
    },
  );
  expect(answer.status).toBe(200);
  expect(CacheCandidates.parse(answer.json).entries.map((entry) => entry.key)).toEqual([newer, older]);
});

test('bad input and missing credentials are refused, each saying what was expected', async () => {
  const token = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
  const shortKey = await plane.call('GET', `/api/v1/team-cache/abc?${query('acme/model')}`, { token });
  expect(shortKey.status).toBe(400);
  expect(String(shortKey.json.error)).toContain('expected a cache key (64 lowercase hex digits)');
  const noRepository = await plane.call('GET', `/api/v1/team-cache/${DIGEST}`, { token });
  expect(noRepository.status).toBe(400);
  expect(String(noRepository.json.error)).toContain('repository: is required');
  const badRepository = await plane.call('GET', `/api/v1/team-cache?${query('../etc')}`, { token });
  expect(badRepository.status).toBe(400);
  const anonymous = await plane.call('GET', `/api/v1/team-cache?${query('acme/model')}`);
  expect(anonymous.status).toBe(401);
  const unknown = await plane.call('GET', `/api/v1/team-cache?${query('acme/model')}`, {
    token: 'f'.repeat(64),
  });
  expect(unknown.status).toBe(401);
  expect(String(unknown.json.error)).toContain('this API token is not known');
});
