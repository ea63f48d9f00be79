import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  bindBlobStore,
  ForeignBlobStoreError,
  refuseForeignBlobStore,
} from '../../app/blobs/bind-blob-store.js';
import { STORE_ID_NAME } from '../../app/blobs/blob-storage.js';
import { DirectoryBlobStorage } from '../../app/blobs/directory-blob-storage.js';
import { readBlobStoreBinding } from '../../store/blobs/blob-store-binding.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';

// A control plane pointed at a blob store that is not its database's would put results
// where the database never looks for them, and `gc` would delete every blob the other
// deployment keeps: the store and the database are bound to each other by an id.

let ours: TestDatabase;
let theirs: TestDatabase;
let scratch: string;
let s3: TestS3;
beforeAll(async () => {
  ours = await createTestDatabase();
  theirs = await createTestDatabase();
  s3 = await startTestS3();
  scratch = await mkdtemp(join(tmpdir(), 'fluksio-store-binding-'));
});
afterAll(async () => {
  await s3.close();
  await ours.close();
  await theirs.close();
  await rm(scratch, { recursive: true, force: true });
});

test('a directory store is bound by the first gc, then refused to another database, elsewhere, or under another id', async () => {
  const store = new DirectoryBlobStorage(join(scratch, 'ours', 'blobs'));
  await store.check();
  const id = await bindBlobStore(ours.db, store, 'FLUKSIO_DATA_DIR');
  expect(await readBlobStoreBinding(ours.db)).toMatchObject({ storeId: id, location: store.location });
  expect((await readFile(join(store.root, STORE_ID_NAME), 'utf8')).trim()).toBe(id);
  // Started again: the same binding.
  expect(await bindBlobStore(ours.db, store, 'FLUKSIO_DATA_DIR')).toBe(id);

  // The control plane's start: this store passes, another deployment's (its id) is refused.
  await refuseForeignBlobStore(ours.db, store, 'FLUKSIO_DATA_DIR');
  const foreign = new DirectoryBlobStorage(join(scratch, 'foreign', 'blobs'));
  await foreign.check();
  await foreign.writeStoreId('5b1e-another-deployment');
  await expect(refuseForeignBlobStore(ours.db, foreign, 'FLUKSIO_DATA_DIR')).rejects.toThrow(
    /belongs to another fluksio database \(its fluksio-store-id is 5b1e-another-deployment/,
  );
  // A store with no id yet, or a database not bound yet, starts as before.
  await refuseForeignBlobStore(ours.db, new DirectoryBlobStorage(join(scratch, 'none')), 'FLUKSIO_DATA_DIR');
  await refuseForeignBlobStore(theirs.db, foreign, 'FLUKSIO_DATA_DIR');

  // Another deployment's database pointed at this store.
  const shared = bindBlobStore(theirs.db, store, 'FLUKSIO_DATA_DIR');
  await expect(shared).rejects.toThrow(ForeignBlobStoreError);
  await expect(shared).rejects.toThrow(/belongs to another fluksio database .*FLUKSIO_DATA_DIR/);
  expect(await readBlobStoreBinding(theirs.db)).toBeNull();

  // This database pointed at an empty directory (a typo in FLUKSIO_DATA_DIR): nothing is written there.
  const empty = new DirectoryBlobStorage(join(scratch, 'typo', 'blobs'));
  await empty.check();
  await expect(bindBlobStore(ours.db, empty, 'FLUKSIO_DATA_DIR')).rejects.toThrow(
    new RegExp(`has no ${STORE_ID_NAME}, and this database's store \\(${id}\\) is at ${store.root}`),
  );
  await expect(readFile(join(empty.root, STORE_ID_NAME))).rejects.toThrow(/ENOENT/);

  // A store holding another id.
  const other = new DirectoryBlobStorage(join(scratch, 'other', 'blobs'));
  await other.check();
  await other.writeStoreId('0f4ca7b2-other');
  await expect(bindBlobStore(ours.db, other, 'FLUKSIO_DATA_DIR')).rejects.toThrow(
    /its fluksio-store-id is 0f4ca7b2-other/,
  );

  // Its id deleted at the same place (or the first binding interrupted before the store had it): written again.
  await rm(join(store.root, STORE_ID_NAME));
  expect(await bindBlobStore(ours.db, store, 'FLUKSIO_DATA_DIR')).toBe(id);
  expect((await readFile(join(store.root, STORE_ID_NAME), 'utf8')).trim()).toBe(id);

  // Moved with its id: accepted at its new place, which the database now records.
  const moved = new DirectoryBlobStorage(join(scratch, 'moved'));
  await rename(store.root, moved.root);
  expect(await bindBlobStore(ours.db, moved, 'FLUKSIO_DATA_DIR')).toBe(id);
  expect(await readBlobStoreBinding(ours.db)).toMatchObject({ storeId: id, location: moved.location });
});

test('gc --server pointed at another deployment bucket deletes nothing from it, and says why', async () => {
  const env = (database: TestDatabase, dataDir: string) => ({
    DATABASE_URL: database.url,
    FLUKSIO_DATA_DIR: dataDir,
    ...s3.env,
  });
  const theirsDir = join(scratch, 'their-gc');
  const oursDir = join(scratch, 'our-gc');
  // Their deployment's first gc binds the bucket to their database.
  const first = await runCli(['gc', '--server', '--keep-days', '0'], {
    cwd: scratch,
    env: env(theirs, theirsDir),
  });
  expect(first.code, first.stderr).toBe(0);
  // A blob of theirs that our database names nowhere.
  const blob = `sha256/${'ab'.repeat(32)}`;
  await s3.write(blob, 'their model');

  const result = await runCli(['gc', '--server', '--keep-days', '0'], {
    cwd: scratch,
    env: env(ours, oursDir),
  });
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(
    `gc changed nothing: The blob store s3://${s3.bucket} belongs to another fluksio database`,
  );
  expect(result.stderr).toContain('FLUKSIO_S3_BUCKET');
  expect(await s3.keys('sha256/')).toEqual([blob]);
});
