import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sha256Hex } from '../../core/canonical-json.js';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import { runs } from '../../schemas/tables/runs.js';
import { addBlobRef } from '../../store/blobs/add-blob-ref.js';
import { createRun } from '../../store/runs/create-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { makeRun, uniqueRepository } from '../store/store-fixtures.js';

let database: TestDatabase;
let s3: TestS3;
let dataDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startTestS3();
  dataDir = await mkdtemp(join(tmpdir(), 'fluksio-gc-bucket-'));
});
afterAll(async () => {
  await s3.close();
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** An old failed run and an old blob ref nothing names: what gc forgets. */
async function collectable(): Promise<{ runId: string; repository: string; digest: string }> {
  const repository = uniqueRepository();
  const { run } = await createRun({ db: database.db, run: makeRun({ repository, status: 'failed' }) });
  const digest = `sha256:${sha256Hex(repository)}`;
  await addBlobRef({ db: database.db, repository, digest, size: 1, runId: run.id });
  const past = sql`now() - interval '40 days'`;
  await database.db.update(runs).set({ createdAt: past, finishedAt: past }).where(eq(runs.id, run.id));
  await database.db
    .update(blobRefs)
    .set({ createdAt: past, confirmedAt: past })
    .where(eq(blobRefs.repository, repository));
  return { runId: run.id, repository, digest };
}

async function rowsOf({ runId, repository }: { runId: string; repository: string }) {
  const [run] = await database.db.select({ id: runs.id }).from(runs).where(eq(runs.id, runId));
  const refs = await database.db
    .select({ digest: blobRefs.digest })
    .from(blobRefs)
    .where(eq(blobRefs.repository, repository));
  return { run: run?.id ?? null, refs: refs.length };
}

function gc(env: Record<string, string>) {
  return runCli(['gc', '--server', '--keep-days', '0'], {
    cwd: dataDir,
    env: { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: dataDir, ...s3.env, ...env },
  });
}

test('gc --server with a bucket it cannot use exits non-zero, names what to fix, and forgets no row', async () => {
  const stopped = await startTestS3();
  await stopped.close();
  const cases: { env: Record<string, string>; setting: string }[] = [
    { env: { FLUKSIO_S3_BUCKET: 'no-such-bucket-93be' }, setting: 'FLUKSIO_S3_BUCKET' },
    { env: { FLUKSIO_S3_ENDPOINT: stopped.endpoint }, setting: 'FLUKSIO_S3_ENDPOINT' },
    { env: { AWS_ACCESS_KEY_ID: 'NOT-A-KEY-ID' }, setting: 'AWS_ACCESS_KEY_ID' },
  ];
  const rows = await collectable();
  for (const { env, setting } of cases) {
    const result = await gc(env);
    expect(result.code, setting).not.toBe(0);
    expect(await rowsOf(rows), setting).toEqual({ run: rows.runId, refs: 1 });
    expect(result.stderr).toContain('gc changed nothing: cannot use the blob store');
    expect(result.stderr).toContain(setting);
  }

  // With the bucket reachable, the same rows go.
  const result = await gc({});
  expect(result.code, result.stderr).toBe(0);
  expect(await rowsOf(rows)).toEqual({ run: null, refs: 0 });
});
