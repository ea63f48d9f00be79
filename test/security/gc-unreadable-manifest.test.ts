import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { canonicalJson } from '../../core/canonical-json.js';
import { MAX_MANIFEST_BYTES } from '../../app/blobs/read-blob-manifest.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson } from '../helpers/run-cli.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { SCRIPTED_RUNNER_SETTINGS, ScriptedRunner } from './scripted-runner.js';

const PIPELINE = `version: 1
stages:
  features:
    cmd: mkdir -p feats && echo alpha > feats/a.txt
    outs: [feats]
`;
const INSIDE = 'alpha\n';
const INSIDE_DIGEST = digestOf(INSIDE);
const MANIFEST = JSON.stringify({
  version: 1,
  files: [{ path: 'a.txt', digest: INSIDE_DIGEST, size: INSIDE.length, executable: false }],
});
const MANIFEST_DIGEST = digestOf(MANIFEST);
/** A blob nothing names: what gc deletes when it may delete anything. */
const STRAY = 'stray\n';
const STRAY_DIGEST = digestOf(STRAY);

function digestOf(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The control plane's blob store, as someone with access to it sees it. */
interface Store {
  env: Record<string, string>;
  put(digest: string, bytes: string): Promise<void>;
  remove(digest: string): Promise<void>;
  has(digest: string): Promise<boolean>;
  /** Makes the blob larger than gc reads, or null when the store cannot cheaply. */
  inflate: ((digest: string) => Promise<void>) | null;
}

let database: TestDatabase;
let world: ControlPlaneWorld;
let s3: TestS3 | undefined;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

function directoryStore(): Store {
  const path = (digest: string): string =>
    join(world.app.dataDir, 'blobs', 'sha256', digest.slice(7, 9), digest.slice(7));
  return {
    env: {},
    async put(digest, bytes) {
      await mkdir(dirname(path(digest)), { recursive: true });
      await writeFile(path(digest), bytes);
    },
    remove: (digest) => rm(path(digest), { force: true }),
    has: async (digest) => (await stat(path(digest)).catch(() => null)) !== null,
    // A sparse file: its size is what gc sees first.
    inflate: (digest) => truncate(path(digest), MAX_MANIFEST_BYTES + 1),
  };
}

async function s3Store(): Promise<Store> {
  const bucket = (s3 = await startTestS3());
  const key = (digest: string): string => `sha256/${digest.slice(7)}`;
  return {
    env: bucket.env,
    put: (digest, bytes) => bucket.write(key(digest), bytes),
    remove: (digest) => bucket.remove(key(digest)),
    has: async (digest) => (await bucket.keys(key(digest))).includes(key(digest)),
    inflate: null,
  };
}

describe.each([
  { name: 'a directory', open: async () => directoryStore() },
  { name: 'an S3 bucket', open: s3Store },
])('fluksio gc --server on $name', ({ open }) => {
  beforeEach(() => {
    world = new ControlPlaneWorld(database.db, database.url);
  });
  afterEach(async () => {
    await world.close();
    await s3?.close();
    s3 = undefined;
  });

  test('a directory manifest it cannot read keeps every blob file, and gc says which and why', async () => {
    const store = await open();
    await world.start({ ...store.env, ...SCRIPTED_RUNNER_SETTINGS });
    const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'feats\n' });
    await world.allow([project.repository]);
    const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };
    const scripted = await ScriptedRunner.register(database.db, world.app.url);

    // A succeeded run (the repository's baseline, which gc keeps) with a directory out.
    const runId = await world.submit(base);
    const claim = await scripted.claim();
    expect(claim.run.id).toBe(runId);
    await scripted.start(claim);
    // Stored by the run before it names them: a stage may name only blobs its repository holds.
    await scripted.storeBlob(claim, INSIDE);
    await scripted.storeBlob(claim, MANIFEST);
    const feats = [{ path: 'feats', kind: 'dir' as const, digest: MANIFEST_DIGEST, size: INSIDE.length }];
    expect((await scripted.reportStage(claim, 0, 'features', feats)).status).toBe(200);
    expect((await scripted.finish(claim)).status).toBe(200);

    const gc = () =>
      runCli(['gc', '--keep-days', '0'], {
        cwd: world.app.dataDir,
        env: { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir, ...store.env },
      });

    // Readable, it lets gc delete what nothing names and keep the directory's file.
    await store.put(STRAY_DIGEST, STRAY);
    const intact = await gc();
    expect(intact.code, intact.stderr).toBe(0);
    expect(await store.has(STRAY_DIGEST)).toBe(false);
    expect(await store.has(INSIDE_DIGEST)).toBe(true);

    const cases: { breakIt: () => Promise<void>; reason: string }[] = [
      { breakIt: () => store.remove(MANIFEST_DIGEST), reason: 'missing from' },
      { breakIt: () => store.put(MANIFEST_DIGEST, '{"version": 1, "files": ['), reason: 'damaged: not JSON' },
      {
        breakIt: () => store.put(MANIFEST_DIGEST, '{"version": 1, "files": 3}'),
        reason: 'damaged: not a directory manifest (files:',
      },
    ];
    const inflate = store.inflate;
    if (inflate) {
      cases.push({
        breakIt: async () => {
          await store.put(MANIFEST_DIGEST, MANIFEST);
          await inflate(MANIFEST_DIGEST);
        },
        reason: `too large: ${MAX_MANIFEST_BYTES + 1} bytes`,
      });
    }
    for (const { breakIt, reason } of cases) {
      await store.put(STRAY_DIGEST, STRAY);
      await breakIt();
      const result = await gc();
      expect(result.code, reason).toBe(1);
      expect(result.stderr).toContain('deleted no blob file');
      expect(result.stderr).toContain(
        `${MANIFEST_DIGEST} (a directory out of ${project.repository}): ${reason}`,
      );
      expect(await store.has(INSIDE_DIGEST), reason).toBe(true);
      expect(await store.has(STRAY_DIGEST), reason).toBe(true);
    }
  });
});

describe('fluksio gc in a project', () => {
  const LOCAL_PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
stages:
  train:
    cmd: mkdir -p model && echo "\${lr}" > model/w.txt
    params: [lr]
    outs: [model]
`;
  let home: string;
  let repo: TestRepo | undefined;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  });
  afterEach(async () => {
    await repo?.cleanup();
    repo = undefined;
    await rm(home, { recursive: true, force: true });
  });

  test('a manifest gone or damaged keeps every blob file, and gc says which and why', async () => {
    const project = (repo = await makeRepo({
      files: { 'fluksio.yml': LOCAL_PIPELINE, '.gitignore': 'model/\n' },
    }));
    const env = {
      HOME: home,
      XDG_CACHE_HOME: join(home, '.cache'),
      DATABASE_URL: undefined,
      FLUKSIO_DATA_DIR: undefined,
    };
    const blobPath = (digest: string): string =>
      join(project.dir, '.fluksio', 'blobs', 'sha256', digest.slice(7, 9), digest.slice(7));
    const has = async (digest: string): Promise<boolean> =>
      (await stat(blobPath(digest)).catch(() => null)) !== null;

    for (const lr of ['0.3', '0.1']) {
      const made = await runJson([`lr=${lr}`], { cwd: project.dir, env });
      expect(made.code, made.stderr).toBe(0);
    }
    // The newest success stays, with its directory out; the older run's blobs are collectable.
    const older = digestOf('0.3\n');
    const kept = digestOf('0.1\n');
    const manifest = digestOf(
      canonicalJson({
        version: 1,
        files: [{ path: 'w.txt', digest: kept, size: 4, executable: false }],
      }),
    );
    expect(await has(manifest)).toBe(true);

    const cases: { breakIt: () => Promise<void>; reason: string }[] = [
      { breakIt: () => rm(blobPath(manifest)), reason: 'missing from' },
      { breakIt: () => writeFile(blobPath(manifest), '{"version": 1, "files": ['), reason: 'damaged: Blob' },
    ];
    for (const { breakIt, reason } of cases) {
      await breakIt();
      const result = await runCli(['gc', '--keep-days', '0'], { cwd: project.dir, env });
      expect(result.code, reason).toBe(1);
      expect(result.stderr).toContain('deleted no blob file');
      expect(result.stderr).toContain(`${manifest} (a directory out of `);
      expect(result.stderr).toContain(reason);
      expect(await has(kept), reason).toBe(true);
      expect(await has(older), reason).toBe(true);
    }
  });
});
