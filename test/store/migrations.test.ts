import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { migrateDatabase } from '../../store/db/migrate-database.js';
import { openLocalDatabase, type LocalDatabase } from '../../store/db/open-local-database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import journal from '../../drizzle/meta/_journal.json' with { type: 'json' };
import { makeRun, uniqueRepository } from './store-fixtures.js';

async function expectEveryTableOnce(db: Database): Promise<void> {
  const created = await db
    .select({ name: sql<string>`table_name` })
    .from(sql`information_schema.tables`)
    .where(sql`table_schema = 'public'`)
    .orderBy(sql`table_name`);
  expect(created.map((table) => table.name)).toEqual([
    'annotations',
    'api_tokens',
    'applied_events',
    'blob_refs',
    'blob_store_binding',
    'blob_uploads',
    'cache_entries',
    'control_plane_availability',
    'deliveries',
    'github_checks',
    'github_notices',
    'group_comments',
    'installations',
    'log_lines',
    'metric_points',
    'runners',
    'runs',
    'stage_log_sizes',
    'stages',
  ]);
  const applied = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(sql`drizzle.__drizzle_migrations`);
  // Once each: as many as drizzle-kit's journal lists.
  expect(applied).toEqual([{ count: journal.entries.length }]);
}

async function expectJsonAsJsonAndArraysAsArrays(db: Database): Promise<void> {
  const run = makeRun({
    repository: uniqueRepository(),
    labels: ['gpu', 'a100'],
    params: { lr: 0.1, model: 'small', fast: true },
  });
  await db.insert(runs).values(run);
  const [row] = await db
    .select({
      paramsType: sql<string>`jsonb_typeof(${runs.params})`,
      labels: runs.labels,
      params: runs.params,
      metricsType: sql<string>`jsonb_typeof(${runs.metrics})`,
    })
    .from(runs)
    .where(sql`${runs.id} = ${run.id}`);
  expect(row).toEqual({
    paramsType: 'object',
    labels: ['gpu', 'a100'],
    params: { lr: 0.1, model: 'small', fast: true },
    metricsType: 'object',
  });
}

describe('migrations on PostgreSQL 15', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
  });
  afterAll(() => database.close());

  test('create every table from nothing, and applying them again changes nothing', async () => {
    await migrateDatabase(database.db);
    await migrateDatabase(database.db);
    await expectEveryTableOnce(database.db);
  });

  test('store JSON as JSON and text arrays as arrays', async () => {
    await expectJsonAsJsonAndArraysAsArrays(database.db);
  });
});

describe('the local store on disk (PGlite)', () => {
  let dataDir: string;
  let store: LocalDatabase;
  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'fluksio-store-')), 'db');
    store = await openLocalDatabase(dataDir);
  });
  afterAll(async () => {
    await store.close();
    await rm(dirname(dataDir), { recursive: true, force: true });
  });

  test('is migrated from nothing when first opened, and migrating again changes nothing', async () => {
    await migrateDatabase(store.db);
    await expectEveryTableOnce(store.db);
  });

  test('stores JSON as JSON and text arrays as arrays', async () => {
    await expectJsonAsJsonAndArraysAsArrays(store.db);
  });

  test('refuses a second opener while open, and keeps its runs across opens', async () => {
    const repository = uniqueRepository();
    await store.db.insert(runs).values(makeRun({ repository }));
    await expect(openLocalDatabase(dataDir, { waitMs: 0 })).rejects.toThrow(
      `The local store ${dataDir} is in use by another fluksio process (pid ${process.pid}); wait for it to finish and try again`,
    );
    await store.close();
    await store.close();

    const started = performance.now();
    store = await openLocalDatabase(dataDir);
    const openMs = performance.now() - started;
    const rows = await store.db
      .select()
      .from(runs)
      .where(sql`${runs.repository} = ${repository}`);
    expect(rows).toHaveLength(1);
    console.log(`opening an existing local store took ${Math.round(openMs)} ms`);
  });
});

describe('a local store made from the template', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'fluksio-template-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /**
   * A FIFO in the template that a copy reaches after PG_VERSION (fs.cp refuses FIFOs): a
   * copy cut short there, as a full disk or a killed process cuts it. Copy order is the
   * file system's, so names are tried until one comes after PG_VERSION.
   */
  async function cutShortAfterPgVersion(template: string): Promise<string> {
    for (let attempt = 0; attempt < 64; attempt += 1) {
      const fifo = join(template, `cut-${attempt}`);
      execFileSync('mkfifo', [fifo]);
      const probe = join(scratch, `probe-${attempt}`);
      const copiedFirst = await cp(template, probe, { recursive: true }).then(
        () => false,
        () => existsSync(join(probe, 'PG_VERSION')),
      );
      await rm(probe, { recursive: true, force: true });
      if (copiedFirst) return fifo;
      await rm(fifo);
    }
    throw new Error('no name a copy reaches after PG_VERSION');
  }

  test('a copy cut short leaves no database behind: the next open makes it whole', async () => {
    const templateRoot = join(scratch, 'templates');
    const first = await openLocalDatabase(join(scratch, 'first', 'db'), { templateRoot });
    await first.close();
    const [template] = await readdir(templateRoot);
    if (template === undefined) throw new Error('no template made');
    const fifo = await cutShortAfterPgVersion(join(templateRoot, template));

    const dataDir = join(scratch, 'project', 'db');
    await expect(openLocalDatabase(dataDir, { templateRoot })).rejects.toThrow(/FIFO/);
    await rm(fifo);
    const store = await openLocalDatabase(dataDir, { templateRoot });
    try {
      await expectEveryTableOnce(store.db);
    } finally {
      await store.close();
    }
    expect((await readdir(dirname(dataDir))).filter((name) => name.includes('copying'))).toEqual([]);
  });
});
