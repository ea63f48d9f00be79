import { readdir, readFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { SCRIPTED_RUNNER_SETTINGS, ScriptedRunner } from './scripted-runner.js';

/**
 * A blob ref records only the run that confirmed it last. When a later run confirms it,
 * then ends and is collected, the earlier run still running must keep the ref (and the
 * file): its stage names the blob only when it finishes.
 */
const PIPELINE = `version: 1
stages:
  train:
    cmd: echo weights > model.txt
    outs: [model.txt]
`;
const WEIGHTS = 'weights\n';

let database: TestDatabase;
let world: ControlPlaneWorld;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/** Every blob file the control plane holds, by digest. */
async function storedBlobs(): Promise<string[]> {
  const root = join(world.app.dataDir, 'blobs', 'sha256');
  const names = await readdir(root, { recursive: true }).catch(() => [] as string[]);
  return names
    .map((name) => name.split('/').at(-1) ?? '')
    .filter((name) => /^[0-9a-f]{64}$/.test(name))
    .map((name) => `sha256:${name}`);
}

/** Makes every blob file 40 days old, so only the database decides what gc keeps. */
async function ageBlobFiles(): Promise<void> {
  const then = new Date(Date.now() - 40 * 86_400_000);
  const root = join(world.app.dataDir, 'blobs', 'sha256');
  for (const digest of await storedBlobs()) {
    await utimes(join(root, digest.slice(7, 9), digest.slice(7)), then, then);
  }
}

/** R1 uploads the weights and keeps running; R2 is told they are stored, then fails. */
async function overtakenConfirmation() {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' });
  await world.allow([project.repository]);
  const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };

  const first = await world.submit({ ...base, noCache: true });
  const one = await ScriptedRunner.register(database.db, world.app.url, 'one');
  const firstClaim = await one.claim();
  expect(firstClaim.run.id).toBe(first);
  await one.start(firstClaim);
  const digest = await one.putBlob(firstClaim, WEIGHTS);

  const second = await world.submit({ ...base, noCache: true });
  const two = await ScriptedRunner.register(database.db, world.app.url, 'two');
  const secondClaim = await two.claim();
  expect(secondClaim.run.id).toBe(second);
  await two.start(secondClaim);
  expect(await two.head(secondClaim, digest)).toBe(200);
  const [ref] = await database.db
    .select({ confirmedBy: blobRefs.confirmedBy })
    .from(blobRefs)
    .where(and(eq(blobRefs.repository, project.repository), eq(blobRefs.digest, digest)));
  expect(ref?.confirmedBy).toBe(second);
  expect((await two.finish(secondClaim, 'failed')).status).toBe(200);
  expect((await world.report(second)).run.status).toBe('failed');
  expect((await world.report(first)).run.status).toBe('running');
  await ageBlobFiles();

  const admin = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir };
  const gc = async () => {
    const result = await runCli(['gc', '--keep-days', '0'], { cwd: world.app.dataDir, env: admin });
    expect(result.code, result.stderr).toBe(0);
  };
  return { project, first, second, one, firstClaim, digest, gc };
}

test('gc keeps a blob a still-running run confirmed after a later run confirmed it and was collected', async () => {
  const { project, first, second, one, firstClaim, digest, gc } = await overtakenConfirmation();
  await gc();
  // gc did collect the later run, and with it the only run the ref remembers.
  expect(await world.row(second).catch(() => null)).toBeNull();
  expect(await storedBlobs()).toContain(digest);

  const finished = await one.reportStage(firstClaim, 0, 'train', [
    { path: 'model.txt', kind: 'file', digest, size: WEIGHTS.length },
  ]);
  expect(finished.status, finished.text).toBe(200);
  expect((await one.finish(firstClaim)).status).toBe(200);
  expect((await world.report(first)).run.status).toBe('succeeded');
  const pull = await runCli(['pull', first, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(pull.code, pull.stderr).toBe(0);
  expect(await readFile(join(project.repo.dir, 'pulled', 'model.txt'), 'utf8')).toBe(WEIGHTS);
});

test('once the earlier run ends without naming the blob, gc collects its ref and file', async () => {
  const { first, one, firstClaim, digest, gc } = await overtakenConfirmation();
  await gc();
  expect(await storedBlobs()).toContain(digest);

  expect((await one.finish(firstClaim, 'failed')).status).toBe(200);
  expect((await world.report(first)).run.status).toBe('failed');
  await gc();
  expect(await world.row(first).catch(() => null)).toBeNull();
  expect(await database.db.select().from(blobRefs).where(eq(blobRefs.digest, digest))).toEqual([]);
  expect(await storedBlobs()).not.toContain(digest);
});
